/**
 * The Slack app's secrets on AWS: a Secrets Manager secret named by an environment variable the stack sets from the
 * stage's `notifications.slackApp`, read on first use and kept for the life of the execution environment (once per
 * cold start). A name that is not set falls back to the plain variable (`FLYWHEEL_SLACK_SIGNING_SECRET`, …), then to
 * undefined: the endpoints answer 503 and the worker dead-letters its work, saying why.
 *
 * @example
 * const signingSecret = secretOnce(process.env.FLYWHEEL_SLACK_SIGNING_SECRET_NAME, process.env.FLYWHEEL_SLACK_SIGNING_SECRET);
 * const value = await signingSecret(); // string | undefined
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

let client: SecretsManagerClient | undefined;

export function secretOnce(secretName: string | undefined, fallback?: string): () => Promise<string | undefined> {
  let value: Promise<string | undefined> | undefined;
  return () => {
    if (!secretName) return Promise.resolve(fallback || undefined);
    value ??= (client ??= new SecretsManagerClient({}))
      .send(new GetSecretValueCommand({ SecretId: secretName }))
      .then((r) => r.SecretString?.trim() || undefined)
      .catch((error: unknown) => {
        // A failed read is tried again by the next request, not remembered.
        value = undefined;
        throw error;
      });
    return value;
  };
}
