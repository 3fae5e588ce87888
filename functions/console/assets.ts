/**
 * GET / and GET /console/{asset}: the web console's page and files (open routes). The files are the build the CDK
 * bundling put beside this handler (`./console/`, lib/constructs/flywheel-function.ts); FLYWHEEL_CONSOLE_DIR overrides.
 */
import { fileURLToPath } from 'node:url';
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routesOf } from '../../lib/api/routes.ts';
import { CONSOLE_DIR_ENV } from '../../lib/console/http/console-assets.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { observability } from '../observability.ts';

process.env[CONSOLE_DIR_ENV] ??= fileURLToPath(new URL('./console/', import.meta.url));
const obs = observability('console-assets');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = makeDispatcher(routesOf('console/assets'), ports).use(obs.middlewares);
