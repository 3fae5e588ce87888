import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Scope } from '../auth/scopes.ts';
import type { Ports } from '../ports/ports.ts';

/** An HTTP handler in API Gateway's REST (v1) proxy shape: used by Lambda and by the local server alike. */
export type ApiHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/**
 * One API route. The route table (`lib/api/routes.ts`) is the single list that the CDK API stack turns into
 * API Gateway resources and methods, that the local server dispatches on, and that the OpenAPI document describes.
 */
export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** API Gateway resource path with `{param}` placeholders, e.g. `/v1/feedback/{eventId}`. */
  path: string;
  operationId: string;
  /** Which Lambda function serves it (`functions/<capability>/<lambda>.ts`); routes of one function share its grants. */
  lambda: string;
  /** False for routes open without an API key (none today: even the OpenAPI document needs a key). */
  apiKeyRequired: boolean;
  /**
   * The scope a key needs (`lib/auth/scopes.ts`): `ingest` (post feedback and reports), `read`, or `admin` (suites,
   * checkpoints, sweeps, labels and approvals; implies read). Checked by the dispatcher on every request.
   */
  scope: Scope;
  make: (ports: Ports) => ApiHandler;
}
