import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { StageSettings } from '../config/stages.ts';
import { ArtifactsBucket } from '../constructs/artifacts-bucket.ts';
import { ArchiveTables } from '../experiments/infra/archive-tables.ts';
import { IngestQueue } from '../feedback/infra/ingest-queue.ts';
import { RecordsTable } from '../constructs/records-table.ts';

/**
 * Pinned CloudFormation logical ids of every stateful resource. Never change one: CloudFormation would replace the
 * resource (a new, empty table or bucket). Tests hold the synthesized templates to this list.
 */
export const STATEFUL_LOGICAL_IDS = {
  recordsTable: 'RecordsTable',
  artifactsBucket: 'ArtifactsBucket',
  accessLogsBucket: 'AccessLogsBucket',
  ingestQueue: 'IngestQueue',
  ingestDeadLetterQueue: 'IngestDeadLetterQueue',
} as const;

export interface DataStackProps extends StackProps {
  settings: StageSettings;
}

/**
 * The stateful stack: records table, artifacts bucket (and its access-log bucket), ingestion queue and dead-letter
 * queue, and the archive's Glue tables and Athena workgroup (they hold no data: the archive is the bucket's objects).
 * Nothing here holds code; stateless stacks are granted access through the constructs' grant helpers
 * (`records.grantReadWrite(fn)`, `blobs.grantWrite(fn, prefix)`, `archive.grantArchiveQuery(fn)`, …) or the house
 * function's capability methods.
 * Termination protection is on where the stage retains data.
 */
export class DataStack extends Stack {
  readonly records: RecordsTable;
  readonly blobs: ArtifactsBucket;
  readonly ingest: IngestQueue;
  readonly archive: ArchiveTables;

  constructor(scope: Construct, id: string, props: DataStackProps) {
    super(scope, id, { terminationProtection: props.settings.retainData, ...props });
    const { settings } = props;
    this.records = new RecordsTable(this, 'Records', { retain: settings.retainData, logicalId: STATEFUL_LOGICAL_IDS.recordsTable });
    this.blobs = new ArtifactsBucket(this, 'Blobs', {
      settings,
      logicalId: STATEFUL_LOGICAL_IDS.artifactsBucket,
      accessLogsLogicalId: STATEFUL_LOGICAL_IDS.accessLogsBucket,
      arnExportName: `${this.stackName}-ArtifactsBucketArn`,
    });
    this.ingest = new IngestQueue(this, 'Ingest', {
      settings,
      logicalId: STATEFUL_LOGICAL_IDS.ingestQueue,
      deadLetterLogicalId: STATEFUL_LOGICAL_IDS.ingestDeadLetterQueue,
    });
    this.archive = new ArchiveTables(this, 'Archive', { settings, blobs: this.blobs });
  }
}
