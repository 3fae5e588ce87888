/**
 * The CDK app: `npx cdk synth|deploy --all -c stage=dev|prod` (default dev) builds the `Flywheel-<stage>` stage of
 * stacks from typed settings (lib/config/stages.ts) and the route table, checked by cdk-nag's AwsSolutions pack.
 */
import { App } from 'aws-cdk-lib';
import { FAIL_SYNTH_ON_VALIDATION_ERRORS_CONTEXT } from 'aws-cdk-lib/cx-api';
import { routes } from '../lib/api/routes.ts';
import { addFlywheelStage } from '../lib/stacks/flywheel-stage.ts';

// The CLI asks the app to leave validation failures to it, and then lets them pass: an unacknowledged cdk-nag
// finding must fail the synth (and so the deploy), so the app reports and fails itself.
const app = new App({ postCliContext: { [FAIL_SYNTH_ON_VALIDATION_ERRORS_CONTEXT]: true } });
const stage = String(app.node.tryGetContext('stage') ?? 'dev');
addFlywheelStage(app, stage, routes);
app.synth();
