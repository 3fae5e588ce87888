import { fileURLToPath } from 'node:url';
import { type CfnResource, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StageSettings } from '../config/stages.ts';
import type { ArtifactsBucket } from './artifacts-bucket.ts';
import type { RecordsTable } from './records-table.ts';
import { CHART_ASSETS, CHART_ASSETS_VARIABLE } from '../shared/chart/chart-assets.ts';

/** The repository root: functions are bundled from here, with the one lock file of the project. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The CloudWatch namespace of every function's Powertools metrics. */
export const METRICS_NAMESPACE = 'Flywheel';

/**
 * Data files a capability's functions read at run time, copied beside the bundled handler (`/var/task/<name>`) and
 * named to the code by an environment variable: the failure-mode classifier trains its default model from the
 * project's labelled set when no model is stored yet.
 */
const BUNDLED_DATA: Record<string, { path: string; variable: string }[]> = {
  modes: [{ path: 'data/modes/labelled.jsonl', variable: 'FLYWHEEL_MODES_LABELLED_SET' }],
};

/**
 * Builds a function's bundle carries beside its handler, by the function's `lambda` name: the web console's page and
 * files (`./console/`, served by functions/console/assets.ts), made by the same command a person runs.
 */
const BUNDLED_BUILDS: Record<string, (inputDir: string, outputDir: string) => string[]> = {
  'console/assets': (inputDir, outputDir) => [`node "${inputDir}/bin/build-console.ts" --out "${outputDir}/console"`],
};

/**
 * Functions that render charts as PNG (`lib/shared/chart/render-chart.ts`): their bundle carries resvg's wasm and the
 * DejaVu fonts beside the handler, named by `FLYWHEEL_CHART_ASSETS` (node_modules is not in a bundle).
 */
const CHART_LAMBDAS = new Set(['training/api', 'experiments/api', 'experiments/schedule', 'people/slack', 'people/slack-worker']);

/**
 * The shell commands that copy the chart renderer's files into a bundle's folder (an afterBundling hook).
 *
 * @example
 * chartAssetCommands('/repo', '/tmp/bundle') // ['cp "/repo/node_modules/@resvg/resvg-wasm/index_bg.wasm" "/tmp/bundle/resvg.wasm"', ...]
 */
export function chartAssetCommands(inputDir: string, outputDir: string): string[] {
  return CHART_ASSETS.map((a) => `cp "${inputDir}/${a.source}" "${outputDir}/${a.name}"`);
}

/** The esbuild settings every function is bundled with (the chart bundle test bundles with them too). */
export const FUNCTION_BUNDLING = {
  target: 'node24',
  mainFields: ['module', 'main'],
  minify: true,
  // ESM output still meets CommonJS dependencies that call require().
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
} as const;

export interface FlywheelFunctionProps {
  /** The entry's name under `functions/`, without extension: `feedback/ingest` bundles `functions/feedback/ingest.ts`. */
  lambda: string;
  settings: StageSettings;
  /** Variables added to the house ones (`FLYWHEEL_STAGE`, Powertools service and namespace, source maps). */
  environment?: Record<string, string>;
  /** @default 512 */
  memorySize?: number;
  /** @default 10 seconds: behind API Gateway (29 s integration timeout) a handler that takes longer is already broken. */
  timeout?: Duration;
  description?: string;
}

/**
 * The house Lambda function: Node.js 24 on ARM64, ESM bundled locally with esbuild (no Docker), source maps on,
 * X-Ray tracing, its own log group with the stage's retention, and a role that starts empty. Access is granted only
 * through the capability methods below, which name the actions a port driver needs, never a wildcard action.
 *
 * @example
 * const ingest = new FlywheelFunction(this, 'Ingest', { lambda: 'feedback/ingest', settings });
 * ingest.sendToQueue(data.ingest.queue);
 * ingest.writeBlobs(data.blobs);
 */
export class FlywheelFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: LogGroup;
  readonly lambda: string;

  constructor(scope: Construct, id: string, props: FlywheelFunctionProps) {
    super(scope, id);
    const { settings } = props;
    this.lambda = props.lambda;

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: retentionDays(settings.logRetentionDays),
      removalPolicy: settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    // A role without the AWSLambdaBasicExecutionRole managed policy: the function writes to its own log group only.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${props.lambda} (${settings.stage})`,
    });
    this.logGroup.grantWrite(this.role);

    const capability = props.lambda.split('/')[0] ?? props.lambda;
    const data = BUNDLED_DATA[capability] ?? [];
    const fileName = (path: string) => path.split('/').pop() as string;
    const builds = BUNDLED_BUILDS[props.lambda];
    const charts = CHART_LAMBDAS.has(props.lambda);
    this.fn = new NodejsFunction(this, 'Function', {
      entry: `${PROJECT_ROOT}functions/${props.lambda}.ts`,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      role: this.role,
      logGroup: this.logGroup,
      description: props.description ?? `Flywheel ${props.lambda} (${settings.stage})`,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        FLYWHEEL_STAGE: settings.stage,
        POWERTOOLS_SERVICE_NAME: `flywheel-${capability}`,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        ...Object.fromEntries(data.map((d) => [d.variable, `/var/task/${fileName(d.path)}`])),
        ...(charts ? { [CHART_ASSETS_VARIABLE]: '/var/task' } : {}),
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: FUNCTION_BUNDLING.target,
        mainFields: [...FUNCTION_BUNDLING.mainFields],
        minify: FUNCTION_BUNDLING.minify,
        sourceMap: true,
        sourceMapMode: SourceMapMode.DEFAULT,
        sourcesContent: false,
        // Bundle the AWS SDK too, so the function runs the versions the lock file pins and the tests exercised.
        externalModules: [],
        banner: FUNCTION_BUNDLING.banner,
        ...(data.length > 0 || builds || charts
          ? {
              commandHooks: {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (inputDir: string, outputDir: string) => [
                  ...data.map((d) => `cp "${inputDir}/${d.path}" "${outputDir}/${fileName(d.path)}"`),
                  ...(builds?.(inputDir, outputDir) ?? []),
                  ...(charts ? chartAssetCommands(inputDir, outputDir) : []),
                ],
              },
            }
          : {}),
      },
    });

    // CDK makes the function DependsOn its role (and the role's policy, which the SQS event source needs before the
    // mapping is created); the role is also a GetAtt, which cfn-lint reports as redundant (W3005). Keep the
    // dependency, silence that one check on this one resource.
    (this.fn.node.defaultChild as CfnResource).addMetadata('cfn-lint', { config: { ignore_checks: ['W3005'] } });

    // Tracing.ACTIVE adds xray:PutTraceSegments and xray:PutTelemetryRecords to the role's default policy.
    const defaultPolicy = this.role.node.tryFindChild('DefaultPolicy');
    if (defaultPolicy) {
      Validations.of(defaultPolicy).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions, so tracing needs Resource "*"; every other statement names its resources.',
      });
    }
  }

  /** Get and query records (table and its indexes). */
  readRecords(records: RecordsTable): this {
    records.grantRead(this.role);
    return this;
  }

  /** Read, conditionally write and delete records. */
  readWriteRecords(records: RecordsTable): this {
    records.grantReadWrite(this.role);
    return this;
  }

  /** Get and list blobs. */
  readBlobs(blobs: ArtifactsBucket): this {
    blobs.grantRead(this.role);
    return this;
  }

  /** Put and delete blobs, optionally only under a key prefix (e.g. `raw/feedback/`). */
  writeBlobs(blobs: ArtifactsBucket, prefix?: string): this {
    blobs.grantWrite(this.role, prefix);
    return this;
  }

  /** Send to a queue and read its depth. */
  sendToQueue(queue: IQueue): this {
    queue.grantSendMessages(this.role);
    return this;
  }

  /** An alarm, wired to `topic`, when the function errors `threshold` times or more in 5 minutes. */
  alarmOnErrors(topic: ITopic, threshold: number): Alarm {
    const alarm = new Alarm(this, 'ErrorsAlarm', {
      alarmDescription: `${this.lambda}: ${threshold} or more invocation errors in 5 minutes`,
      metric: this.fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(topic));
    alarm.addOkAction(new SnsAction(topic));
    return alarm;
  }

  /** Publish domain events to a bus. */
  publishEvents(bus: IEventBus): this {
    bus.grantPutEventsTo(this.role);
    return this;
  }
}

/** The CloudWatch retention for a number of days; throws when CloudWatch offers no such retention. */
export function retentionDays(days: number): RetentionDays {
  const valid = Object.values(RetentionDays).filter((v): v is RetentionDays => typeof v === 'number');
  const match = valid.find((v) => v === days);
  if (match === undefined) {
    throw new Error(`logRetentionDays ${days} is not a CloudWatch retention: use one of ${valid.join(', ')}`);
  }
  return match;
}
