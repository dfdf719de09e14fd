/**
 * Arbitraries the option fuzzers share (the Queue's calls, the consumers' options, the CLI's
 * argv): names, job ids, payloads and numbers, valid, at the edges, and of the wrong kind.
 */
import fc from 'fast-check';

/** A value that refers to itself: JSON cannot carry it, and JSON.stringify throws on it. */
function cyclic(): Record<string, unknown> {
  const value: Record<string, unknown> = { a: 1 };
  value.self = value;
  return value;
}

/**
 * Numbers at the edges of what ms, counts and limits take: 0, 1, the 32-bit timer limit, the
 * priority and attempt limits, the payload cap, the safe-integer limit, just past each, fractions.
 */
export const edgeNumber: fc.Arbitrary<number> = fc.constantFrom(
  0, 1, -1, 2, 999, 1000, 1.5, 0.5, 1e-7, -0, Number.MIN_VALUE,
  2_097_151, 2_097_152, 1_000_000, 1_000_001, 1_048_576, 65_535, 65_536,
  2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), Number.MAX_VALUE,
);

/** Values of a kind no option or argument takes, as plain JavaScript (or a cast) can pass them. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    undefined, null, Number.NaN, Infinity, -Infinity, true, false, '', ' ', '1', '1.5', 'NaN', '-1', '1e3',
    [], [1], {}, 10n, -(2n ** 64n), Symbol('fuzz'), () => 1, new Date(Number.NaN), new Date(0),
  ),
  fc.constant(null).map(() => cyclic()),
  fc.string({ maxLength: 8 }),
  fc.double(),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

/** Mostly `valid`, sometimes a number at the edges, sometimes a value of the wrong kind. */
export function validOr<T>(valid: fc.Arbitrary<T>, weight = 6): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: valid, weight }, { arbitrary: edgeNumber, weight: 1 }, { arbitrary: wrongValue, weight: 1 });
}

/** Queue and group names the keyspace refuses: empty, spaces, braces, colons, non-ASCII, 129 long. */
export const badName: fc.Arbitrary<string> = fc.constantFrom(
  '', ' ', 'a b', 'a{b}', '{q}', 'a:b', '*', 'é', '𝕏', 'x'.repeat(129), 'q\n', 'q/x', 'emq:queues', 'a\u0000b',
);

/** Job ids: ones that name jobs a fuzzer adds, ones at the edges of the id rule, and any text. */
export const jobIdLike: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom('JOB:1', 'JOB:2', 'JOB:3', '1', '2', 'a', 'JOB:a', 'b.c-d_e:f'), weight: 4 },
  {
    arbitrary: fc.constantFrom(
      'JOB:', 'JOB', 'JOB:JOB:', ':', 'job:1', ' JOB:1', 'JOB:1 ', '', 'x'.repeat(200), 'x'.repeat(201),
      `JOB:${'x'.repeat(196)}`, `JOB:${'x'.repeat(197)}`, 'FLOW:1', 'JOB:*', 'JOB:{q}', 'a b', 'é', 'JOB:\n',
    ),
    weight: 2,
  },
  { arbitrary: fc.string({ maxLength: 10 }), weight: 1 },
);

/** The default payload cap: 1 MiB of UTF-8 JSON. */
const CAP = 1024 * 1024;

/**
 * Payloads: JSON values mostly; what JSON cannot carry (undefined, a function, a BigInt, a symbol,
 * a cycle, a toJSON that throws); strings whose JSON is exactly the 1 MiB cap and one byte over
 * (ASCII, and multi-byte text measured in UTF-8); text with lone surrogates.
 */
export const payloadValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 12 },
  {
    arbitrary: fc.constantFrom<unknown>(undefined, () => 1, 10n, Symbol('p'), { big: 10n }, [undefined], {
      toJSON(): never {
        throw new Error('no JSON for this one');
      },
    }),
    weight: 2,
  },
  { arbitrary: fc.constant(null).map(() => cyclic()), weight: 1 },
  // JSON of 'x'.repeat(n) is n + 2 bytes: at the cap, and one byte over
  { arbitrary: fc.constantFrom(CAP - 2, CAP - 1).map((n) => 'x'.repeat(n)), weight: 1 },
  // 'é' is 2 bytes of UTF-8 and one UTF-16 unit: under the cap in characters, over it in bytes
  { arbitrary: fc.constantFrom(CAP / 2 - 1, CAP / 2).map((n) => 'é'.repeat(n)), weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 2 },
);

/** Text that is not one JSON value: what `emq enqueue` must refuse as a payload. */
export const notJson: fc.Arbitrary<string> = fc.constantFrom('', ' ', '{', '{"a":1', "'x'", 'undefined', 'NaN', '1 2', '[1,]', '{a:1}', '0x10', '--');

/**
 * Integer options as text, as a command line passes them: integers, the edges as text (fractions,
 * past the safe-integer limit), forms Number() takes but an integer option must not ('', ' 1',
 * '0x10', '1e3', '+1'), and any text.
 */
export const intText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 100_000 }).map(String), weight: 4 },
  { arbitrary: edgeNumber.map(String), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '', ' ', ' 1', '1 ', '+1', '0x10', '1e3', '1_000', '٣', 'NaN', 'Infinity', '-', '--', '99999999999999999999', '007', '=1', '1.0',
    ),
    weight: 2,
  },
  { arbitrary: fc.string({ maxLength: 6 }), weight: 1 },
);
