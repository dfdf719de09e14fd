import { type ParseArgsConfig, parseArgs as parseNodeArgs } from 'node:util';
import { MAX_PARTITIONS } from '../../partitions/partition-of.js';
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

/** The parsed integer of option `name`, if given; anything else is a usage error. */
export function intOption(values: Record<string, unknown>, name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^-?\d+$/.test(raw) || !Number.isSafeInteger(n)) {
    throw new UsageError(`--${name} takes an integer, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** `--partitions N` (1 to MAX_PARTITIONS), if given. */
export function partitionsOption(values: Record<string, unknown>): number | undefined {
  const partitions = intOption(values, 'partitions');
  if (partitions !== undefined && (partitions < 1 || partitions > MAX_PARTITIONS)) throw new UsageError(`--partitions takes 1 to ${MAX_PARTITIONS}, got ${partitions}`);
  return partitions;
}

/** A job's payload given on the command line, parsed; text that is not JSON is a usage error. */
export function payloadArgument(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw new UsageError(`the payload is not JSON: ${json}`);
  }
}
