/**
 * The hash slot of a key as Redis Cluster computes it: CRC16 (XMODEM) of the key's hash tag (the
 * part inside the first `{...}` when it is not empty), or of the whole key, modulo 16384. Every
 * key of a queue (`emq:{q}:...`) has the queue's slot.
 *
 * @example
 * slotOf('emq:{mail}:wake') === slotOf('emq:{mail}:pending'); // true
 */
export function slotOf(key: string): number {
  const bytes = UTF8.encode(key);
  const open = bytes.indexOf(0x7b); // {
  let start = 0;
  let end = bytes.length;
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1); // }
    if (close > open + 1) {
      start = open + 1;
      end = close;
    }
  }
  let crc = 0;
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xff00) ^ TABLE[((crc >> 8) ^ bytes[i]!) & 0xff]!;
  return crc % SLOTS;
}

const UTF8 = new TextEncoder();

/** A cluster's hash slots. */
export const SLOTS = 16384;

/** CRC16/XMODEM (polynomial 0x1021), a byte at a time. */
const TABLE: Uint16Array = (() => {
  const table = new Uint16Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n << 8;
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    table[n] = c;
  }
  return table;
})();
