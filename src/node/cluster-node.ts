import { InvalidArgumentError } from '../errors.js';

/**
 * `host:port` (or `[v6]:port`), surrounding whitespace ignored, as ioredis takes a cluster node;
 * InvalidArgumentError naming the entry (and `source`, the variable it came from) otherwise.
 *
 * @example
 * clusterNode(' 127.0.0.1:7000 '); // { host: '127.0.0.1', port: 7000 }
 */
export function clusterNode(entry: string, source = 'a cluster node'): { host: string; port: number } {
  // a name or IPv4 address, or an IPv6 address in brackets; then the port
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(entry.trim());
  const port = Number(match?.[3]);
  if (!match || port < 1 || port > 65_535) {
    throw new InvalidArgumentError(`${source}: ${JSON.stringify(entry.trim())} is not host:port (e.g. 127.0.0.1:7000)`);
  }
  return { host: (match[1] ?? match[2])!, port };
}
