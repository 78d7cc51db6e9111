import pino from 'pino';

export type Logger = pino.Logger;
export type Component =
  | 'gateway'
  | 'cache'
  | 'operator'
  | 'scheduler'
  | 'webhook'
  | 'aggregated-api'
  | 'extender'
  | 'graphql'
  | 'leader'
  | 'auth'
  | 'certs';

/** One root logger for the process; each component logs through a child carrying `component`. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'nodeload' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: ['req.headers.authorization', '*.token'],
    },
    destination,
  );
}

export function componentLogger(root: Logger, component: Component): Logger {
  return root.child({ component });
}
