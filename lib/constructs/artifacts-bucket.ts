import { Duration, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { StageSettings } from '../config/stages.ts';

/** Where the processor archives raw events (one object per batch, by date: Athena-readable). */
export const RAW_FEEDBACK_PREFIX = 'raw/feedback/';
/** Where the ingest handler spills envelopes too big for one queue message. */
export const INGEST_SPOOL_PREFIX = 'spool/ingest/';

export interface ArtifactsBucketProps {
  settings: StageSettings;
  /** Pinned CloudFormation logical ids, so that moving this construct never replaces a bucket. */
  logicalId: string;
  accessLogsLogicalId: string;
  /**
   * A stable export name for the bucket ARN. Stacks that are granted access import it by this name, so the
   * cross-stack reference never changes name (and their nag acknowledgments can name the resource they concern).
   */
  arnExportName: string;
}

/**
 * The artifacts bucket (`lib/ports/blobs.ts`): S3-managed encryption, TLS only, public access blocked, versioned,
 * lifecycle per stage, server access logs to a separate bucket.
 */
export class ArtifactsBucket extends Construct {
  readonly bucket: s3.Bucket;
  readonly accessLogs: s3.Bucket;
  readonly arnExportName: string;

  constructor(scope: Construct, id: string, props: ArtifactsBucketProps) {
    super(scope, id);
    const { settings } = props;
    const removal = settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.arnExportName = props.arnExportName;

    this.accessLogs = new s3.Bucket(this, 'AccessLogs', {
      // The log delivery service writes with SSE-S3 only (SSE-KMS targets are not supported for access logs).
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        { id: 'expire-access-logs', expiration: Duration.days(Math.max(settings.logRetentionDays, 1)) },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
      ],
      removalPolicy: removal,
    });
    (this.accessLogs.node.defaultChild as s3.CfnBucket).overrideLogicalId(props.accessLogsLogicalId);

    const rawRule: s3.LifecycleRule = {
      id: 'raw-feedback-tiering',
      prefix: RAW_FEEDBACK_PREFIX,
      transitions: [
        {
          storageClass: s3.StorageClass.INFREQUENT_ACCESS,
          transitionAfter: Duration.days(settings.rawArchiveInfrequentAccessDays),
        },
      ],
      ...(settings.rawArchiveExpireDays > 0 ? { expiration: Duration.days(settings.rawArchiveExpireDays) } : {}),
    };
    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'artifacts/',
      lifecycleRules: [
        rawRule,
        {
          // Spilled ingest envelopes are needed while their message can still be delivered or redriven:
          // 4 days in the ingest queue + 14 in the dead-letter queue = 18 days; 30 leaves room for a redrive
          // (which sends a fresh message) and a weekend.
          id: 'expire-ingest-spool',
          prefix: INGEST_SPOOL_PREFIX,
          expiration: Duration.days(30),
        },
        {
          id: 'noncurrent-versions',
          noncurrentVersionExpiration: Duration.days(settings.noncurrentVersionDays),
          expiredObjectDeleteMarker: true,
        },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
      ],
      removalPolicy: removal,
    });
    (this.bucket.node.defaultChild as s3.CfnBucket).overrideLogicalId(props.logicalId);
    Stack.of(this).exportValue(this.bucket.bucketArn, { name: props.arnExportName });
  }

  /** Get objects and list keys. */
  grantRead(grantee: iam.IGrantable & Construct): iam.Grant {
    const arn = this.arnIn(grantee);
    const grant = iam.Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket'], resourceArns: [arn.value] }).combine(
      iam.Grant.addToPrincipal({ grantee, actions: ['s3:GetObject'], resourceArns: [`${arn.value}/*`] }),
    );
    this.acknowledgeObjectWildcard(grantee, `${arn.label}/*`);
    return grant;
  }

  /** Put and delete objects, under `prefix` when given. */
  grantWrite(grantee: iam.IGrantable & Construct, prefix = ''): iam.Grant {
    const arn = this.arnIn(grantee);
    const grant = iam.Grant.addToPrincipal({
      grantee,
      actions: ['s3:PutObject', 's3:DeleteObject'],
      resourceArns: [`${arn.value}/${prefix}*`],
    });
    this.acknowledgeObjectWildcard(grantee, `${arn.label}/${prefix}*`);
    return grant;
  }

  /**
   * Object access under key patterns only (IAM wildcards: `*` spans `/`): GetObject under `read`, PutObject under
   * `write` (never DeleteObject: the bucket is versioned, so an overwrite keeps the earlier version), an explicit deny
   * of PutObject under `denyWrite` (keys a wider `write` pattern would cover but the grantee must never write), and
   * ListBucket on the bucket. ListBucket is on the whole key space, names only: without it S3 answers 403 rather
   * than 404 for a missing key, and the blobs port tells "absent" from "denied" by that.
   *
   * @example
   * blobs.grantObjectPatterns(role, { read: ['sweeps/*'], write: ['sweeps/*' + '/results/*'], denyWrite: ['sweeps/*' + '/shards/*'], reason });
   */
  grantObjectPatterns(grantee: iam.IGrantable & Construct, access: { read: readonly string[]; write: readonly string[]; denyWrite?: readonly string[]; reason: string }): void {
    const arn = this.arnIn(grantee);
    const objects = (patterns: readonly string[]) => patterns.map((p) => `${arn.value}/${p}`);
    iam.Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket'], resourceArns: [arn.value] });
    if (access.read.length > 0) iam.Grant.addToPrincipal({ grantee, actions: ['s3:GetObject'], resourceArns: objects(access.read) });
    if (access.write.length > 0) iam.Grant.addToPrincipal({ grantee, actions: ['s3:PutObject'], resourceArns: objects(access.write) });
    if (access.denyWrite && access.denyWrite.length > 0) {
      grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ effect: iam.Effect.DENY, actions: ['s3:PutObject'], resources: objects(access.denyWrite) }));
    }
    const wildcards = [...new Set([...access.read, ...access.write].filter((p) => p.includes('*')))];
    if (wildcards.length > 0) {
      Validations.of(grantee).acknowledge(
        ...wildcards.map((p) => ({ id: `AwsSolutions-IAM5[Resource::${arn.label}/${p}]`, reason: access.reason })),
      );
    }
  }

  /** The bucket ARN as the grantee's stack sees it, and the label cdk-nag prints for it. */
  private arnIn(grantee: Construct): { value: string; label: string } {
    if (Stack.of(grantee) === Stack.of(this)) {
      const logicalId = Stack.of(this).resolve((this.bucket.node.defaultChild as s3.CfnBucket).logicalId) as string;
      return { value: this.bucket.bucketArn, label: `<${logicalId}.Arn>` };
    }
    // An import by name creates no dependency by itself: the grantee's stack deploys after this one.
    Stack.of(grantee).addStackDependency(Stack.of(this), 'imports the artifacts bucket ARN');
    return { value: Fn.importValue(this.arnExportName), label: this.arnExportName };
  }

  private acknowledgeObjectWildcard(grantee: Construct, resource: string): void {
    Validations.of(grantee).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${resource}]`,
      reason:
        'Blob keys are chosen at run time (event ids, dates), so object access is granted on the key space of this one bucket (or one prefix of it), never on other buckets.',
    });
  }
}
