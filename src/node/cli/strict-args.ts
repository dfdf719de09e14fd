import { type ParseArgsConfig, parseArgs as parseNodeArgs } from 'node:util';
import { nearest } from './nearest.js';

/** A command line that does not parse: the CLI prints it with the usage and exits 2. */
export class UsageError extends Error {}

/** ": did you mean X?" when `input` looks like a typo of one of `known`, else "". */
export const didYouMean = (input: string, known: readonly string[]): string => {
  const guess = nearest(input, known);
  return guess === undefined ? '' : `: did you mean ${guess}?`;
};

/**
 * node's parseArgs, strict, but an unknown option is a usage error that names the nearest known
 * one (`unknown option --concurency: did you mean --concurrency?`).
 */
export function parseArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseNodeArgs<T>> {
  try {
    return parseNodeArgs(config);
  } catch (error) {
    const unknown = /^Unknown option '([^']+)'/.exec((error as Error).message);
    if (!unknown || (error as { code?: unknown }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw error;
    const known = Object.keys(config.options ?? {}).map((name) => `--${name}`);
    throw new UsageError(`unknown option ${unknown[1]}${didYouMean(unknown[1]!, known)}`);
  }
}

