/**
 * `echomq/bull-board`: an adapter that shows echomq queues on bull-board 9 (`@bull-board/api`, a
 * peer dependency you install beside a server adapter such as `@bull-board/hono` or
 * `@bull-board/express`). The states, what works and what throws: docs/guides/bull-board.md.
 *
 * @example
 * import { createBullBoard } from '@bull-board/api';
 * import { ExpressAdapter } from '@bull-board/express';
 * import { EchoMQAdapter } from 'echomq/bull-board';
 *
 * const serverAdapter = new ExpressAdapter().setBasePath('/board');
 * createBullBoard({ queues: [new EchoMQAdapter(queue)], serverAdapter });
 * app.use('/board', serverAdapter.getRouter());
 *
 * @module echomq/bull-board
 */
export { EchoMQAdapter } from './adapter.js';
export type { EchoMQAdapterOptions } from './adapter.js';
export { BoardJob } from './board-job.js';
export type { BoardJobOptions, DependencyCounts, JobHost, JobProgress } from './board-job.js';
export { UnsupportedBoardActionError } from './errors.js';
export { FlowReader } from './flows.js';
export type { FlowQuery, FlowTreeNode, QueueByName } from './flows.js';
export type { LayerQueue } from './add-job.js';
export type { BoardScheduler } from './schedulers.js';
export { BOARD_STATUSES, boardCountsOf, boardStatusOf, STATES_OF } from './statuses.js';
export type { BoardCounts, BoardStatus } from './statuses.js';
