/**
 * The archive's tables on AWS (`lib/experiments/infra/archive-tables.ts`) as the Data stack synthesizes them: the Glue
 * database and the two EXTERNAL JSON tables with projected partitions, the enforced Athena workgroup, the results'
 * lifecycle, the grant a function gets, and cdk-nag. The columns are held to the DuckDB views, so the same SQL reads
 * the same columns on both engines.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAGES } from '../../lib/config/stages.ts';
import { ATHENA_QUERY_ENV } from '../../lib/drivers/aws/athena-query.ts';
import { DuckDbQuery } from '../../lib/drivers/local/duckdb-query.ts';
import {
  ARCHIVE_FIRST_DAY,
  ATHENA_BYTES_SCANNED_CUTOFF,
  ATHENA_RESULTS_EXPIRE_DAYS,
  ATHENA_RESULTS_PREFIX,
  archiveDatabaseName,
  archiveWorkGroupName,
} from '../../lib/experiments/infra/archive-tables.ts';
import { ARCHIVE_TABLES } from '../../lib/experiments/record-keys.ts';
import { EXPERIMENT_LIMITS, EXPOSURE_ROW_COLUMNS, METRIC_ROW_COLUMNS } from '../../lib/experiments/schemas.ts';
import { DataStack, STATEFUL_LOGICAL_IDS } from '../../lib/stacks/data-stack.ts';
import { functionEnvironment } from '../../lib/stacks/function-environment.ts';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { cdkJsonContext, nagFindingsIgnoringAcknowledgments, nagViolations, resourcesOfType } from './synth-flywheel.ts';

type Resource = { Properties: Record<string, any>; DependsOn?: string[] };

const stageNames = ['dev', 'prod'] as const;
const built: Partial<Record<(typeof stageNames)[number], { app: App; data: Template; consumer: Template; environment: Record<string, string>; outdir: string }>> = {};

beforeAll(() => {
  for (const name of stageNames) {
    const outdir = mkdtempSync(join(tmpdir(), `flywheel-archive-${name}-`));
    const app = new App({ outdir, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const env = { account: '123456789012', region: 'eu-west-1' };
    const data = new DataStack(app, 'Data', { settings: STAGES[name], env });
    // A function's role in another stack (as the experiments API is), granted as it would be.
    const consumer = new Stack(app, 'Consumer', { env });
    const role = new iam.Role(consumer, 'AnalysisRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    data.archive.grantArchiveQuery(role);
    const environment = functionEnvironment(data, new EventBus(consumer, 'Bus'));
    const assembly = app.synth();
    built[name] = {
      app,
      data: Template.fromJSON(assembly.getStackArtifact(data.artifactId).template as Record<string, unknown>),
      consumer: Template.fromJSON(assembly.getStackArtifact(consumer.artifactId).template as Record<string, unknown>),
      environment,
      outdir,
    };
  }
}, 120_000);
afterAll(() => {
  for (const b of Object.values(built)) rmSync(b.outdir, { recursive: true, force: true });
});

const get = (name: (typeof stageNames)[number]) => built[name]!;
const bucketRef = { Ref: STATEFUL_LOGICAL_IDS.artifactsBucket };

describe.each(stageNames)('archive tables (%s)', (name) => {
  const settings = STAGES[name];

  it('a Glue database named for the stage', () => {
    get(name).data.hasResourceProperties('AWS::Glue::Database', {
      CatalogId: '123456789012',
      DatabaseInput: { Name: archiveDatabaseName(settings) },
    });
    expect(archiveDatabaseName(settings)).toMatch(/^[a-z0-9_]+$/);
  });

  it.each([
    [ARCHIVE_TABLES.metrics, 'raw/metrics/', METRIC_ROW_COLUMNS],
    [ARCHIVE_TABLES.exposures, 'raw/exposures/', EXPOSURE_ROW_COLUMNS],
  ] as const)('%s: EXTERNAL JSON Lines over %s, every column in order, tenant and dt projected', (table, prefix, columns) => {
    const location = { 'Fn::Join': ['', ['s3://', bucketRef, `/${prefix}`]] };
    get(name).data.hasResourceProperties('AWS::Glue::Table', {
      DatabaseName: archiveDatabaseName(settings),
      TableInput: {
        Name: table,
        TableType: 'EXTERNAL_TABLE',
        PartitionKeys: [Match.objectLike({ Name: 'tenant', Type: 'string' }), Match.objectLike({ Name: 'dt', Type: 'string' })],
        Parameters: {
          EXTERNAL: 'TRUE',
          classification: 'json',
          'projection.enabled': 'true',
          'projection.tenant.type': 'injected',
          'projection.dt.type': 'date',
          'projection.dt.format': 'yyyy-MM-dd',
          'projection.dt.range': `${ARCHIVE_FIRST_DAY},NOW`,
          'projection.dt.interval': '1',
          'projection.dt.interval.unit': 'DAYS',
          'storage.location.template': { 'Fn::Join': ['', ['s3://', bucketRef, `/${prefix}tenant=\${tenant}/dt=\${dt}/`]] },
        },
        StorageDescriptor: {
          Location: location,
          Columns: columns.map((c) => ({ Name: c, Type: c === 'value' ? 'double' : 'string' })),
          InputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
          OutputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
          SerdeInfo: { SerializationLibrary: 'org.openx.data.jsonserde.JsonSerDe', Parameters: { 'ignore.malformed.json': 'false' } },
        },
      },
    });
    // Every day an accepted event can carry is projected: the range starts before the first ingest (December 2026)
    // by more than how far back occurred_at may be.
    expect(Date.parse(ARCHIVE_FIRST_DAY)).toBeLessThanOrEqual(Date.parse('2026-12-01') - EXPERIMENT_LIMITS.occurredAtMaxPastMs);
    // Created after the database it names.
    const [tableResource] = Object.values(resourcesOfType(get(name).data, 'AWS::Glue::Table') as Record<string, Resource>).filter((r) => r.Properties.TableInput.Name === table);
    const [databaseId] = Object.keys(resourcesOfType(get(name).data, 'AWS::Glue::Database'));
    expect(tableResource!.DependsOn).toContain(databaseId);
  });

  it('the DuckDB views have the Glue tables\' columns, types and partitions, in order', async () => {
    const root = mkdtempSync(join(tmpdir(), 'flywheel-archive-duckdb-'));
    const query = new DuckDbQuery(root);
    try {
      const glueTables = Object.values(resourcesOfType(get(name).data, 'AWS::Glue::Table') as Record<string, Resource>);
      expect(glueTables).toHaveLength(2);
      for (const t of glueTables) {
        const input = t.Properties.TableInput as { Name: string; StorageDescriptor: { Columns: Array<{ Name: string; Type: string }> }; PartitionKeys: Array<{ Name: string; Type: string }> };
        const { rows } = await query.run(
          `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '${input.Name}' ORDER BY ordinal_position`,
        );
        const glue = [...input.StorageDescriptor.Columns, ...input.PartitionKeys].map((c) => ({ column_name: c.Name, data_type: c.Type === 'double' ? 'DOUBLE' : 'VARCHAR' }));
        expect(rows).toEqual(glue);
      }
    } finally {
      await query.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('an enforced Athena workgroup: engine 3, results under athena-results/ with SSE-S3, a bytes-scanned cutoff', () => {
    get(name).data.hasResourceProperties('AWS::Athena::WorkGroup', {
      Name: archiveWorkGroupName(settings),
      State: 'ENABLED',
      RecursiveDeleteOption: !settings.retainData,
      WorkGroupConfiguration: {
        EnforceWorkGroupConfiguration: true,
        PublishCloudWatchMetricsEnabled: true,
        BytesScannedCutoffPerQuery: ATHENA_BYTES_SCANNED_CUTOFF,
        EngineVersion: { SelectedEngineVersion: 'Athena engine version 3' },
        ResultConfiguration: {
          OutputLocation: { 'Fn::Join': ['', ['s3://', bucketRef, `/${ATHENA_RESULTS_PREFIX}`]] },
          EncryptionConfiguration: { EncryptionOption: 'SSE_S3' },
        },
      },
    });
    // Athena's minimum cutoff is 10 MB; a benchmark-sized analysis (about 3.9 GB unpruned) fits under it.
    expect(ATHENA_BYTES_SCANNED_CUTOFF).toBeGreaterThan(3.9e9);
  });

  it('query results expire; the stateful logical ids stay', () => {
    get(name).data.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([{ Id: 'expire-athena-results', Prefix: ATHENA_RESULTS_PREFIX, ExpirationInDays: ATHENA_RESULTS_EXPIRE_DAYS, Status: 'Enabled' }]),
      },
    });
    const resources = get(name).data.toJSON().Resources as Record<string, { Type: string }>;
    for (const id of Object.values(STATEFUL_LOGICAL_IDS)) expect(resources[id], id).toBeDefined();
  });

  it('functions get the workgroup and database the Athena driver reads', () => {
    expect(get(name).environment).toMatchObject({
      [ATHENA_QUERY_ENV.workGroup]: archiveWorkGroupName(settings),
      [ATHENA_QUERY_ENV.database]: archiveDatabaseName(settings),
    });
  });

  it('grantArchiveQuery: this workgroup, this database and its two tables, the two archive folders, the results folder', () => {
    const statements = Object.values(resourcesOfType(get(name).consumer, 'AWS::IAM::Policy')).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown; Effect: string }>,
    );
    const text = (v: unknown) => JSON.stringify(v);
    const actionsOn = (fragment: string) =>
      statements.filter((s) => text(s.Resource).includes(fragment)).flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
    expect(actionsOn(`workgroup/${archiveWorkGroupName(settings)}`).sort()).toEqual(
      ['athena:GetQueryExecution', 'athena:GetQueryResults', 'athena:GetWorkGroup', 'athena:StartQueryExecution', 'athena:StopQueryExecution'].sort(),
    );
    const glue = statements.find((s) => text(s.Action).includes('glue:GetTable'))!;
    expect(text(glue.Resource)).toContain(`:catalog`);
    expect(text(glue.Resource)).toContain(`database/${archiveDatabaseName(settings)}`);
    for (const t of Object.values(ARCHIVE_TABLES)) expect(text(glue.Resource)).toContain(`table/${archiveDatabaseName(settings)}/${t}`);
    expect(text(glue.Action)).not.toMatch(/Create|Update|Delete|Batch/);
    expect(actionsOn('/raw/metrics/*')).toEqual(['s3:GetObject']);
    expect(actionsOn('/raw/exposures/*')).toEqual(['s3:GetObject']);
    expect(actionsOn(`/${ATHENA_RESULTS_PREFIX}*`).sort()).toEqual(['s3:AbortMultipartUpload', 's3:GetObject', 's3:ListMultipartUploadParts', 's3:PutObject'].sort());
    expect(statements.some((s) => text(s.Action).includes('s3:DeleteObject'))).toBe(false);
    // Nothing on other workgroups or on every resource.
    expect(statements.some((s) => s.Resource === '*')).toBe(false);
  });

  it('passes cdk-nag with nothing unacknowledged (the wildcard object keys acknowledged with a reason)', () => {
    expect(nagViolations(get(name).app)).toEqual([]);
    const acknowledged = nagFindingsIgnoringAcknowledgments(get(name).app).filter((f) => f.includes('Consumer/AnalysisRole'));
    // Exactly the object-key wildcards of the three folders, nothing else.
    expect(acknowledged.sort()).toEqual(
      [ATHENA_RESULTS_PREFIX, 'raw/exposures/', 'raw/metrics/'].map((p) => `AwsSolutions-IAM5[Resource::Data-ArtifactsBucketArn/${p}*]@Consumer/AnalysisRole/DefaultPolicy/Resource`).sort(),
    );
  });
});
