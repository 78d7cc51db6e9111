// A closed loop run in a process of its own (closed-loop.ts's ClosedLoopProcess): the parent sends
// {type: 'run', options} over IPC and gets {type: 'result', result} back; {type: 'stop'} ends a run early.
// Answers read here do not delay the parent's event loop, where another loop measures its latencies.
import { closedLoop, type LoopRequest } from './closed-loop.js';

interface RunMessage {
  type: 'run';
  port: number;
  concurrency: number;
  durationMs: number;
  request: Omit<LoopRequest, 'body'> & { bodyText?: string };
}

let stop: AbortController | undefined;

process.on('message', (m: RunMessage | { type: 'stop' }) => {
  if (m.type === 'stop') {
    stop?.abort();
    return;
  }
  stop = new AbortController();
  const { bodyText, ...request } = m.request;
  void closedLoop({
    port: m.port,
    concurrency: m.concurrency,
    durationMs: m.durationMs,
    request: bodyText === undefined ? request : { ...request, body: () => bodyText },
    signal: stop.signal,
  }).then((result) => {
    process.send?.({ type: 'result', result: { ...result, byStatus: [...result.byStatus] } });
  });
});
process.on('disconnect', () => process.exit(0));
