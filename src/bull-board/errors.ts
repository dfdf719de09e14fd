/**
 * The one error of the bull-board adapter: a board action echomq does not do, thrown before
 * anything is written, never silently replaced by something else (docs/guides/bull-board.md).
 */

/**
 * A bull-board action (a button, a route) that echomq does not do. `feature` names what was
 * asked, `instead` the echomq way; `statusCode` is what bull-board's error handler answers with
 * (400: the request was understood and refused), so the board shows the message in its toast.
 *
 * @example
 * try { await adapter.promoteAll(); } catch (e) { if (e instanceof UnsupportedBoardActionError) console.log(e.instead); }
 */
export class UnsupportedBoardActionError extends Error {
  /** What bull-board's error handler answers with. */
  readonly statusCode = 400;

  constructor(
    /** What was asked: `Promote`, `Retry on a cancelled job`, `job logs`. */
    readonly feature: string,
    /** What to do in echomq instead. */
    readonly instead: string,
  ) {
    super(`echomq does not support ${feature} from bull-board: ${instead} (docs/guides/bull-board.md)`);
    this.name = 'UnsupportedBoardActionError';
  }
}
