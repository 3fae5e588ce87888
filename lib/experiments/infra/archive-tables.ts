/**
 * The raw archive as tables Athena reads: a Glue database with `metric_events` and `exposures` (EXTERNAL, JSON Lines
 * through the OpenX JSON SerDe, the columns of `METRIC_ROW_COLUMNS` / `EXPOSURE_ROW_COLUMNS`, partitioned by `tenant`
 * and `dt`), and the Athena workgroup the analyses run in. Locally DuckDB reads the same files with the same columns
 * (`lib/drivers/local/duckdb-query.ts`), so one SQL text serves both.
 *
 * Partitions are projected, never crawled or added: `dt` is a date range from `ARCHIVE_FIRST_DAY` to NOW, so a new
 * day's folder is queryable the moment its first object lands, and `tenant` is injected, so Athena refuses a query
 * that does not name its tenant (`WHERE tenant = '…'`), and one tenant's query never lists another's folders.
 *
 * The workgroup's configuration is enforced (a client cannot send results elsewhere or lift the limits): results go
 * to `athena-results/` of the artifacts bucket with SSE-S3 and expire after `ATHENA_RESULTS_EXPIRE_DAYS`, and a query
 * that scans more than `ATHENA_BYTES_SCANNED_CUTOFF` is cancelled.
 *
 * The tables and the workgroup hold no data (the objects are the bucket's), so replacing them loses nothing; their
 * names are fixed per stage so that other stacks reach them by name, without cross-stack references.
 *
 * @example
 * const archive = new ArchiveTables(this, 'Archive', { settings, blobs });
 * archive.grantArchiveQuery(experimentsFunction); // env: FLYWHEEL_ATHENA_WORKGROUP, FLYWHEEL_GLUE_DATABASE
 */
import { Duration, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import type { ArtifactsBucket } from '../../constructs/artifacts-bucket.ts';
import { ARCHIVE_TABLES, archiveKeys } from '../record-keys.ts';
import { ARCHIVE_COLUMN_TYPES, EXPOSURE_ROW_COLUMNS, METRIC_ROW_COLUMNS } from '../schemas.ts';

/**
 * The first day the `dt` projection covers. `dt` is the UTC day of `occurred_at`, which the ingest accepts up to 35
 * days back (`EXPERIMENT_LIMITS.occurredAtMaxPastMs`), so the range starts well before the first ingest (December
 * 2026); a wide range costs nothing, as Athena enumerates only the days a query's `dt` bounds name.
 */
export const ARCHIVE_FIRST_DAY = '2026-01-01';

/** Where the workgroup writes query results (and Athena its manifests), in the artifacts bucket. */
export const ATHENA_RESULTS_PREFIX = 'athena-results/';

/** Results are read once, by the analysis that ran the query; a week leaves room to look at one by hand. */
export const ATHENA_RESULTS_EXPIRE_DAYS = 7;

/**
 * 20 GiB per query. An archive row is about 350 bytes of JSON, so one experiment's analysis over 10 million metric
 * events and 1 million exposures (the benchmark's size) scans about 3.9 GB with no pruning; its `dt` and `tenant`
 * predicates prune the rest. The cutoff leaves five times that, and bounds a runaway query at 20 GiB × $5/TB = $0.10.
 */
export const ATHENA_BYTES_SCANNED_CUTOFF = 20 * 1024 ** 3;

/** Glue database name (lowercase, underscores: what Athena accepts unquoted). */
export function archiveDatabaseName(settings: Pick<StageSettings, 'stage'>): string {
  return `flywheel_${settings.stage}_archive`;
}

export function archiveWorkGroupName(settings: Pick<StageSettings, 'stage'>): string {
  return `flywheel-${settings.stage}-archive`;
}

export interface ArchiveTablesProps {
  settings: StageSettings;
  blobs: ArtifactsBucket;
}

interface TableSpec {
  name: string;
  /** The table's folder in the bucket (`raw/metrics/`). */
  prefix: string;
  columns: readonly string[];
  description: string;
}

const TABLES: readonly TableSpec[] = [
  {
    name: ARCHIVE_TABLES.metrics,
    prefix: archiveKeys.metricsRoot,
    columns: METRIC_ROW_COLUMNS,
    description: 'Online metric events (POST /v1/metrics, and those derived from feedback and failure modes), one JSON object per line.',
  },
  {
    name: ARCHIVE_TABLES.exposures,
    prefix: archiveKeys.exposuresRoot,
    columns: EXPOSURE_ROW_COLUMNS,
    description: 'Exposures (POST /v1/exposures): where a checkpoint served a unit in an experiment, one JSON object per line.',
  },
];

export class ArchiveTables extends Construct {
  readonly databaseName: string;
  readonly workGroupName: string;
  readonly database: glue.CfnDatabase;
  readonly tables: Record<keyof typeof ARCHIVE_TABLES, glue.CfnTable>;
  readonly workGroup: athena.CfnWorkGroup;
  readonly #blobs: ArtifactsBucket;

  constructor(scope: Construct, id: string, props: ArchiveTablesProps) {
    super(scope, id);
    const { settings, blobs } = props;
    const stack = Stack.of(this);
    const bucket: s3.Bucket = blobs.bucket;
    this.#blobs = blobs;
    this.databaseName = archiveDatabaseName(settings);
    this.workGroupName = archiveWorkGroupName(settings);

    this.database = new glue.CfnDatabase(this, 'Database', {
      catalogId: stack.account,
      databaseInput: { name: this.databaseName, description: `Flywheel ${settings.stage}: the raw archive of online metrics and exposures, for Athena.` },
    });

    const table = (spec: TableSpec): glue.CfnTable => {
      const location = `s3://${bucket.bucketName}/${spec.prefix}`;
      const cfn = new glue.CfnTable(this, spec.name === ARCHIVE_TABLES.metrics ? 'MetricEvents' : 'Exposures', {
        catalogId: stack.account,
        databaseName: this.databaseName,
        tableInput: {
          name: spec.name,
          description: spec.description,
          tableType: 'EXTERNAL_TABLE',
          partitionKeys: [
            { name: 'tenant', type: 'string', comment: 'The tenant (folder tenant=<t>); every query names it.' },
            { name: 'dt', type: 'string', comment: 'The UTC day of occurred_at, YYYY-MM-DD (folder dt=<day>).' },
          ],
          parameters: {
            EXTERNAL: 'TRUE',
            classification: 'json',
            'projection.enabled': 'true',
            'projection.tenant.type': 'injected',
            'projection.dt.type': 'date',
            'projection.dt.format': 'yyyy-MM-dd',
            'projection.dt.range': `${ARCHIVE_FIRST_DAY},NOW`,
            'projection.dt.interval': '1',
            'projection.dt.interval.unit': 'DAYS',
            'storage.location.template': `${location}tenant=\${tenant}/dt=\${dt}/`,
          },
          storageDescriptor: {
            location,
            columns: spec.columns.map((name) => ({ name, type: ARCHIVE_COLUMN_TYPES[name] ?? 'string' })),
            inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
            outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
            compressed: false,
            // A malformed line fails the query (as it does on DuckDB) rather than vanishing from an analysis.
            serdeInfo: { serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe', parameters: { 'ignore.malformed.json': 'false' } },
          },
        },
      });
      cfn.addResourceDependency(this.database);
      return cfn;
    };
    this.tables = { metrics: table(TABLES[0]!), exposures: table(TABLES[1]!) };

    this.workGroup = new athena.CfnWorkGroup(this, 'WorkGroup', {
      name: this.workGroupName,
      description: `Flywheel ${settings.stage}: experiment analyses over the raw archive`,
      state: 'ENABLED',
      // Query history only: a stage that keeps no data drops it with the stack.
      recursiveDeleteOption: !settings.retainData,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: ATHENA_BYTES_SCANNED_CUTOFF,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        resultConfiguration: {
          outputLocation: `s3://${bucket.bucketName}/${ATHENA_RESULTS_PREFIX}`,
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
        },
      },
    });
    this.workGroup.applyRemovalPolicy(settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY);

    bucket.addLifecycleRule({ id: 'expire-athena-results', prefix: ATHENA_RESULTS_PREFIX, expiration: Duration.days(ATHENA_RESULTS_EXPIRE_DAYS) });
  }

  /** The variables `AthenaQuery.fromEnv` reads (`lib/drivers/aws/athena-query.ts`). */
  get environment(): { FLYWHEEL_ATHENA_WORKGROUP: string; FLYWHEEL_GLUE_DATABASE: string } {
    return { FLYWHEEL_ATHENA_WORKGROUP: this.workGroupName, FLYWHEEL_GLUE_DATABASE: this.databaseName };
  }

  /**
   * Lets `grantee` run analyses: start, read and stop queries in this workgroup only; read the database and its two
   * tables from the Glue catalog; read the objects under `raw/metrics/` and `raw/exposures/`; write and read the
   * results under `athena-results/`. Nothing else of the bucket, no other workgroup, no catalog writes.
   */
  grantArchiveQuery(grantee: iam.IGrantable & Construct): void {
    const stack = Stack.of(grantee);
    if (stack !== Stack.of(this)) stack.addStackDependency(Stack.of(this), 'queries the archive tables and workgroup by name');
    const workGroupArn = stack.formatArn({ service: 'athena', resource: 'workgroup', resourceName: this.workGroupName });
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['athena:StartQueryExecution', 'athena:GetQueryExecution', 'athena:GetQueryResults', 'athena:StopQueryExecution', 'athena:GetWorkGroup'],
      resourceArns: [workGroupArn],
    });
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['glue:GetDatabase', 'glue:GetTable', 'glue:GetTables', 'glue:GetPartition', 'glue:GetPartitions'],
      resourceArns: [
        stack.formatArn({ service: 'glue', resource: 'catalog' }),
        stack.formatArn({ service: 'glue', resource: 'database', resourceName: this.databaseName }),
        ...TABLES.map((t) => stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${this.databaseName}/${t.name}` })),
      ],
    });
    const reason =
      'Athena reads the archive objects of every day and tenant partition (keys chosen at run time) under the two table folders, and writes each query\'s results under a key it names; nothing else of the bucket.';
    this.#blobs.grantObjectPatterns(grantee, {
      read: [...TABLES.map((t) => `${t.prefix}*`), `${ATHENA_RESULTS_PREFIX}*`],
      write: [`${ATHENA_RESULTS_PREFIX}*`],
      reason,
    });
    // Athena also checks the results bucket's region and cleans up its multipart result uploads (the object pattern
    // is the one grantObjectPatterns acknowledged above).
    const bucketArn = stack === Stack.of(this) ? this.#blobs.bucket.bucketArn : Fn.importValue(this.#blobs.arnExportName);
    iam.Grant.addToPrincipal({ grantee, actions: ['s3:GetBucketLocation', 's3:ListBucketMultipartUploads'], resourceArns: [bucketArn] });
    iam.Grant.addToPrincipal({ grantee, actions: ['s3:AbortMultipartUpload', 's3:ListMultipartUploadParts'], resourceArns: [`${bucketArn}/${ATHENA_RESULTS_PREFIX}*`] });
  }
}
