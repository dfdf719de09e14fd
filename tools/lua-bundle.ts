/**
 * Flattens a Lua script's `-- @include <name>` lines into one source. Each include is a file
 * `includes/<name>.lua`; includes may include others. Every include is written once, before
 * the first line that needs it, in depth-first order; a missing or circular include fails with
 * the file and line that asked for it.
 */
export type ReadInclude = (name: string) => string | undefined;

const INCLUDE = /^--\s*@include\s+([a-z0-9_]+)\s*$/;

export class LuaIncludeError extends Error {}

export function bundleLua(file: string, source: string, readInclude: ReadInclude): string {
  const written = new Set<string>();
  const out: string[] = [];

  const expand = (where: string, text: string, stack: string[]): void => {
    const lines = text.split('\n');
    lines.forEach((line, index) => {
      const match = INCLUDE.exec(line.trim());
      if (!match) {
        out.push(line);
        return;
      }
      const name = match[1]!;
      if (stack.includes(name)) {
        throw new LuaIncludeError(
          `${where}:${index + 1}: circular include of "${name}" (${[...stack, name].join(' -> ')})`,
        );
      }
      if (written.has(name)) return;
      const body = readInclude(name);
      if (body === undefined) {
        throw new LuaIncludeError(`${where}:${index + 1}: no include named "${name}"`);
      }
      written.add(name);
      expand(`includes/${name}.lua`, body.replace(/\n+$/, ''), [...stack, name]);
    });
  };

  expand(file, source, []);
  return out.join('\n').replace(/\n{3,}/g, '\n\n');
}
