/**
 * 96 random bits as hex, from Web Crypto (the same in a Worker and on Node): the prefix of the
 * request keys a Queue or Leases makes, once per object (a count follows it per request).
 *
 * @example
 * const key = `a:${randomHex()}${(count++).toString(36)}`;
 */
export function randomHex(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
