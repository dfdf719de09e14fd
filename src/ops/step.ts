import { scripts } from '../generated/scripts.js';
import { codes, type Held, type ScriptOp } from './op.js';

/** A step record to write for a held job (lua/step.lua). */
export interface StepItem extends Held {
  /** The step's index, from 1. */
  readonly index: number;
  /** `d` a run step done, `f` a run step that threw, `i` an invoke about to enqueue its child. */
  readonly kind: 'd' | 'f' | 'i';
  /** How long the step ran, ms (the record's start is the server's time less this). */
  readonly ms: number;
  /** The step's name, for its event. */
  readonly name: string;
  /** The record: a JSON object without its times (src/steps/step-records.ts RawStep). */
  readonly record: string;
}

/** Writes step records, each fenced by its job's lease: true written, false fenced off (lua/step.lua). */
export function stepOp(items: readonly StepItem[]): ScriptOp<boolean[]> {
  return {
    script: scripts.step,
    args: items.flatMap((i) => [i.id, i.token, i.index, i.kind, Math.max(0, Math.round(i.ms)), i.name, i.record]),
    read: (reply) => codes(reply, 'step').map((c) => c === 1),
  };
}
