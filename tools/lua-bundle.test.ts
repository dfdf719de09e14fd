import { describe, expect, it } from 'vitest';
import { bundleLua, LuaIncludeError } from './lua-bundle.js';

const includes: Record<string, string> = {
  a: '-- @include b\nlocal function a() return b() end\n',
  b: 'local function b() return 1 end\n',
  loop1: '-- @include loop2\n',
  loop2: '-- @include loop1\n',
};
const read = (name: string): string | undefined => includes[name];

describe('bundleLua', () => {
  it('writes nested includes once, dependencies first', () => {
    const out = bundleLua('s.lua', '-- @include a\n-- @include b\nreturn a()', read);
    expect(out).toBe('local function b() return 1 end\nlocal function a() return b() end\nreturn a()');
  });

  it('names the file and line of a missing include', () => {
    expect(() => bundleLua('s.lua', 'local x = 1\n-- @include nope', read)).toThrow(
      new LuaIncludeError('s.lua:2: no include named "nope"'),
    );
  });

  it('refuses a circular include with its path', () => {
    expect(() => bundleLua('s.lua', '-- @include loop1', read)).toThrow(/circular include of "loop1" \(loop1 -> loop2 -> loop1\)/);
  });
});
