import type { Stack } from 'aws-cdk-lib';

/**
 * How cdk-nag names a resource ARN in an acknowledgment id (`AwsSolutions-IAM5[Resource::<label>]`): the resolved
 * value with `{ Ref: X }` as `<X>`, `{ Fn::GetAtt: [X, A] }` as `<X.A>`, a Fn::Join joined, anything else as its JSON.
 * The label depends on what the stack knows (a literal region with `env`, `<AWS::Region>` without), so it is computed,
 * never written by hand.
 */
export function nagResourceLabel(stack: Stack, value: string): string {
  return label(stack.resolve(value));
}

function label(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.Ref === 'string') return `<${v.Ref}>`;
    const getAtt = v['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return `<${getAtt.join('.')}>`;
    const join = v['Fn::Join'];
    if (Array.isArray(join)) return (join[1] as unknown[]).map(label).join(join[0] as string);
  }
  return JSON.stringify(value);
}
