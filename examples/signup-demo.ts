/**
 * The durable steps' part of `npm start` (docs/guides/steps.md): two signups of the signup flow
 * (workers/signup-handler.ts) on the `signup` queue, run by a Node consumer and by the platform's
 * runtime (the Worker serves `signup` too), whichever claims each step's run. One gets its
 * `email.verified` event over HTTP (the platform's API when there is one) and is welcomed; the
 * other's wait times out and it is reminded. Says which runtime ran each step.
 */
import { Consumer } from '../src/node/index.js';
import { Queue } from '../src/queue/queue.js';
import type { BlockingTransport, Transport } from '../src/transport.js';
import { type SignupPayload, signupHandler } from '../workers/signup-handler.js';

/** What the demo needs of the stack. */
export interface SignupDemo {
  /** A transport of the stack's Redis, for the queue, and one more the consumer owns. */
  readonly transport: Transport;
  readonly consumerTransport: BlockingTransport;
  /** The platform's API, when it runs one (events are sent there), and its name. */
  readonly edgeUrl: string | undefined;
  readonly runtimeName: string;
  readonly say: (line: string) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the two signups to their end; resolves with the line that says how each went. */
export async function runSignupDemo(demo: SignupDemo): Promise<string> {
  const { transport, edgeUrl, say } = demo;
  const signups = new Queue<SignupPayload>(transport, 'signup');
  const consumer = new Consumer<SignupPayload>(demo.consumerTransport, 'signup', signupHandler('node', say), { concurrency: 2, ownsTransport: true }).start();
  try {
    const verified = await signups.add({ email: 'ada@example.com', sleepMs: 1_000, verifyWithinMs: 20_000 });
    const ignored = await signups.add({ email: 'bob@example.com', sleepMs: 1_000, verifyWithinMs: 2_000 });
    say(`steps: two signups on "signup": each creates its account, sleeps 1 s holding no slot, then waits for email.verified`);
    for (let i = 0; i < 100 && (await signups.getJob(verified.id))?.state !== 'awaiting'; i++) await sleep(100);
    const userId = `user-${verified.id.slice(4)}`;
    const body = JSON.stringify({ data: { userId }, id: `verified-${userId}` });
    if (edgeUrl) {
      const res = await fetch(`${edgeUrl}/v1/queues/signup/events/email.verified`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
      say(`steps: POST /v1/queues/signup/events/email.verified on ${demo.runtimeName}: ${res.status} ${await res.text()}`);
    } else {
      say(`steps: sendEvent email.verified: ${JSON.stringify(await signups.sendEvent('email.verified', { userId }, { id: `verified-${userId}` }))}`);
    }
    const done = async (id: string): Promise<boolean> => (await signups.getJob(id))?.state === 'completed';
    for (let i = 0; i < 200 && !((await done(verified.id)) && (await done(ignored.id))); i++) await sleep(100);
    const told = async (id: string): Promise<string> => {
      const job = await signups.getJob(id);
      const by = (job?.steps ?? []).map((s) => `${s.name} ${s.state}${s.result && typeof s.result === 'object' && 'by' in s.result ? ` (${String(s.result.by)})` : ''}`);
      return `${id} ${(job?.result as { outcome?: string } | undefined)?.outcome ?? job?.state}: ${by.join(', ')}`;
    };
    return `steps: ${await told(verified.id)}; ${await told(ignored.id)}`;
  } finally {
    await consumer.stop(2_000);
  }
}
