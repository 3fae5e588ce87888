/**
 * Powertools for every Lambda entry: one logger, metrics and tracer per function process, their middy
 * middlewares, and a `MetricsPort` over Powertools Metrics so use cases can count without knowing about EMF.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddlewareObj } from '@middy/core';
import type { MetricsPort } from '../lib/ports/metrics.ts';

export interface Observability {
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
  metricsPort: MetricsPort;
  /** logger (injectLambdaContext), metrics (logMetrics), tracer (captureLambdaHandler), for `.use()`. */
  middlewares: MiddlewareObj[];
}

/**
 * @example
 * const obs = observability('feedback-ingest');
 * export const handler = makeDispatcher(routesOf('feedback/ingest'), ports).use(obs.middlewares);
 */
export function observability(serviceName: string): Observability {
  const logger = new Logger({ serviceName });
  const metrics = new Metrics({ namespace: 'Flywheel', serviceName });
  const tracer = new Tracer({ serviceName });
  return {
    logger,
    metrics,
    tracer,
    metricsPort: {
      count: (name, value = 1) => {
        if (value > 0) metrics.addMetric(name, MetricUnit.Count, value);
      },
    },
    middlewares: [
      injectLambdaContext(logger, { resetKeys: true }),
      logMetrics(metrics, { captureColdStartMetric: true }),
      captureLambdaHandler(tracer),
    ] as MiddlewareObj[],
  };
}
