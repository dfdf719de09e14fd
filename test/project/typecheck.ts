import { join } from 'node:path';
import ts from 'typescript';

export const root = join(import.meta.dirname, '..', '..');

/** One error tsc reported: where (file and 1-based line) and what. */
export interface TscError {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** The package's entries mapped to their sources, as a user's `import ... from 'echomq/node'` sees them. */
export const ECHOMQ_PATHS: Record<string, string[]> = {
  echomq: [join(root, 'src', 'index.ts')],
  'echomq/node': [join(root, 'src', 'node', 'index.ts')],
  'echomq/edge': [join(root, 'src', 'edge', 'index.ts')],
  'echomq/serverless': [join(root, 'src', 'serverless', 'index.ts')],
  'echomq/lambda': [join(root, 'src', 'lambda', 'index.ts')],
  'echomq/vercel': [join(root, 'src', 'vercel', 'index.ts')],
  'echomq/netlify': [join(root, 'src', 'netlify', 'index.ts')],
  'echomq/deno': [join(root, 'src', 'deno', 'index.ts')],
  'echomq/http': [join(root, 'src', 'http', 'index.ts')],
  'echomq/bullmq': [join(root, 'src', 'bullmq', 'index.ts')],
  'echomq/bull-board': [join(root, 'src', 'bull-board', 'index.ts')],
};

/** The project's own compiler options (tsconfig.json: strict, NodeNext...), nothing emitted. */
function projectOptions(): ts.CompilerOptions {
  const path = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(path, (p) => ts.sys.readFile(p));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, root).options;
}

/**
 * Where {@link typecheck} looks for errors: in every file of the program (`files` and all they
 * import: src/ and its types), or in `files` alone (and the options and globals), which spares
 * checking src/ (the bulk of the time: a second against some 25 on an idle machine). src/ has its
 * own check in `npm test`'s tsc and in worker-types.test.ts.
 */
export type TypecheckScope = 'program' | 'files';

/**
 * Type-checks `files` (absolute path to text: files that need not exist on disk, each read as a
 * module of the project) under the project's strict options, `echomq` and its entries resolving
 * to src/, and returns every error in those files and, by default, what they import.
 */
export function typecheck(files: ReadonlyMap<string, string>, extra: ts.CompilerOptions = {}, scope: TypecheckScope = 'program'): TscError[] {
  const options: ts.CompilerOptions = { ...projectOptions(), noEmit: true, paths: ECHOMQ_PATHS, ...extra };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (path) => files.has(path) || fileExists.call(host, path);
  host.readFile = (path) => files.get(path) ?? readFile.call(host, path);
  host.getSourceFile = (path, language, onError, create) => {
    const text = files.get(path);
    return text === undefined ? getSourceFile.call(host, path, language, onError, create) : ts.createSourceFile(path, text, language);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  const diagnostics =
    scope === 'program'
      ? ts.getPreEmitDiagnostics(program)
      : [
          ...program.getConfigFileParsingDiagnostics(),
          ...program.getOptionsDiagnostics(),
          ...program.getGlobalDiagnostics(),
          ...[...files.keys()].flatMap((path) => {
            const file = program.getSourceFile(path);
            return file ? [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)] : [];
          }),
        ];
  return diagnostics.map((d) => ({
    file: d.file?.fileName ?? '',
    line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0,
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }));
}
