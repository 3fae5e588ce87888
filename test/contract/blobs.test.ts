import { S3Blobs } from '../../lib/drivers/aws/s3-blobs.ts';
import { FsBlobs } from '../../lib/drivers/local/fs-blobs.ts';
import { createTestBucket, motoClients } from '../support/aws-test-resources.ts';
import { describeBlobsContract } from './blobs.contract.ts';
import { localFixture } from './local-driver-fixture.ts';

const aws = motoClients();
const local = localFixture();

describeBlobsContract('S3 (moto)', async () => new S3Blobs(aws.s3, await createTestBucket(aws)));
describeBlobsContract('filesystem', async () => new FsBlobs(local.dir()));
