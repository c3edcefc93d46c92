import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { Config } from '../config.ts';
import { activeSpanIds } from './trace-context.ts';

/**
 * pino with every credential-bearing header and secret field redacted; with tracing on, each line written
 * inside a span carries its `trace_id` and `span_id`.
 */
export function createLogger(
  config: Pick<Config, 'log' | 'env'> & { tracing?: Config['tracing'] },
  name = 'chs',
  destination?: DestinationStream,
): Logger {
  const options: LoggerOptions = {
    name,
    level: config.log.level,
    ...(config.tracing?.enabled ? { mixin: activeSpanIds } : {}),
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers.cookie',
        'req.headers["stripe-signature"]',
        'req.headers["x-hub-signature"]',
        'req.headers["x-hub-signature-256"]',
        'req.headers["x-slack-signature"]',
        'req.headers["x-signature-ed25519"]',
        '*.password',
        '*.secret',
        '*.api_key',
        '*.token',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
