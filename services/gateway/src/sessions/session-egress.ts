import { z } from 'zod';
import {
  isAllowAll,
  isEgressProblem,
  MAX_EGRESS_RULES,
  parseEgressPolicy,
  type EgressDefault,
  type EgressPolicy,
} from '@sandbox/contract';
import { AppError } from '@sandbox/errors';

const rules = z
  .array(z.string().max(260))
  .max(MAX_EGRESS_RULES)
  .optional()
  .describe(`at most ${MAX_EGRESS_RULES}: IPv4 addresses or CIDRs (203.0.113.0/24)`);

/** An egress policy as the API takes it (ADR 30). */
export const egressInput = z.strictObject({
  default: z
    .enum(['allow', 'deny'])
    .optional()
    .describe("what a destination no rule names gets; default: the plan's (allow)"),
  allow: rules,
  deny: rules,
});

export type EgressInput = z.output<typeof egressInput>;

/** A session's egress policy, as the API shows it. */
export interface EgressView {
  sessionId: string;
  default: EgressDefault;
  allow: string[];
  deny: string[];
}

/**
 * The policy of `input` (normalised), the plan's default filling a missing `default`; null for
 * allow-all (what a session without a policy has). 400 invalid_request names the bad rule.
 */
export function resolveEgress(
  input: EgressInput | undefined,
  planDefault: EgressDefault,
): EgressPolicy | null {
  const policy = parseEgressPolicy(input ?? {}, planDefault);
  if (isEgressProblem(policy)) {
    throw new AppError('invalid_request', `${policy.field} ${policy.message}`, {
      details: {
        field: policy.field,
        ...(policy.value === undefined ? {} : { value: policy.value }),
      },
    });
  }
  return isAllowAll(policy) ? null : policy;
}

export function egressView(sessionId: string, policy: EgressPolicy | null): EgressView {
  return {
    sessionId,
    default: policy?.default ?? 'allow',
    allow: policy?.allow ?? [],
    deny: policy?.deny ?? [],
  };
}
