import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suites that take longest, longest first (seconds each on an idle 2-core machine, per run:
 * a transport suite runs in four projects). They start first in their group, so no long one is
 * left running alone at a group's end while the other workers idle: with vitest's own order
 * (project by project, then the cache's durations or, in a fresh clone, the file's size) the
 * events, property and TypeDoc suites ran last, 20-25 s with the rest done. A suite not named
 * keeps the size order after them; a name here that is no file is no error, only no hint.
 */
export const LONGEST_FIRST = [
  // the processes and unit group
  'test/edge/worker.test.ts', // 40 s: workerd, waits out the client's retries
  'test/node/package.test.ts', // 30 s: npm pack's build, npm ci, tsc
  'test/node/cli.test.ts', // 22 s
  'test/node/start.test.ts', // 22 s: two npm start demos side by side
  'test/project/readme.test.ts', // 20 s
  'test/project/api-reference.test.ts', // 16 s: TypeDoc
  'test/browser/dashboard-worker.test.ts', // 17 s
  'test/edge/schedulers.test.ts', // 15 s
  'test/edge/flows.test.ts', // 10 s
  'test/browser/dashboard-node.test.ts', // 10 s
  'test/edge/partitioned.test.ts', // 10 s
  'test/edge/drains.test.ts', // 10 s
  // the Redis group
  'test/transport/events.test.ts', // 9-36 s: 20,000 jobs through the events stream
  'test/transport/group-limits.property.test.ts', // 8-27 s
  'test/transport/rate-limits.property.test.ts', // 13-21 s
  'test/node/consumer-outage.test.ts', // 15 s
  'test/node/http.test.ts', // 15 s
  'test/transport/fairness.test.ts', // 2-14 s
  'test/node/flow-kill.test.ts', // 8 s
  'test/node/bench-cluster.test.ts', // 8 s
  'test/node/consumer.test.ts', // 8 s
  'test/node/consumer-schedulers.test.ts', // 8 s
  'test/node/bridge-cluster.test.ts', // 7 s
];

/**
 * Orders the suites by `sequence.groupOrder`; then a project whose files share a worker
 * (`isolate: false`) keeps its files together, before the group's isolated files: vitest keeps a
 * shared worker only while the next file in line is of its project, and one file of another
 * project in between costs the next a fresh process and its imports. Then LONGEST_FIRST, then the
 * largest file first: the isolated projects of a group mixed (vitest's own order runs a group's
 * projects one after another, the unit project's TypeDoc suite last). The same order on every
 * machine: no cache of earlier runs decides it.
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification): number => {
      const at = LONGEST_FIRST.indexOf(relative(root, spec.moduleId));
      return at === -1 ? LONGEST_FIRST.length : at;
    };
    // a shared project's files before the isolated ones: its long ones (TypeDoc) start at once
    const shared = (spec: TestSpecification): string => (spec.project.config.isolate ? '\uffff' : spec.project.name);
    const size = (spec: TestSpecification): number => statSync(spec.moduleId).size;
    return [...files].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        shared(a).localeCompare(shared(b)) ||
        rank(a) - rank(b) ||
        size(b) - size(a),
    );
  }
}
