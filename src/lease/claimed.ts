import { decodeChildren, decodeParent } from '../flows/flow.js';
import type { ClaimResult } from '../ops/claim.js';
import { firedBy } from '../schedulers/schedulers.js';
import { traceReceive } from '../telemetry/telemetry.js';
import type { Claimed } from './rounds.js';

/** A claim's rows as jobs with decoded payloads; its `receive` span, from `sentAt`, when it claimed any. */
export function claimedOf<Payload>(queue: string, result: ClaimResult, sentAt?: number): Claimed<Payload> {
  const claimed = {
    ...result,
    fired: 0,
    jobs: result.jobs.map((row) => {
      const scheduler = firedBy(row.id);
      const { parent, children, ...rest } = row;
      const flow = {
        ...(parent === undefined ? {} : { parent: decodeParent(parent) }),
        ...(children === undefined ? {} : { children: decodeChildren(children) }),
      };
      return { ...rest, payload: JSON.parse(row.payload) as Payload, ...(scheduler ? { scheduler } : {}), ...flow };
    }),
  };
  if (sentAt !== undefined) traceReceive(queue, sentAt, claimed.jobs);
  return claimed;
}
