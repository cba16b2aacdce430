import type { PlanLimits, PlanName } from '../limits/plans';

/** Operations a key may be allowed; a key lacking one gets 403 forbidden. */
export type Scope = 'sessions' | 'execute' | 'files' | 'processes' | 'webhooks';
export const ALL_SCOPES: readonly Scope[] = [
  'sessions',
  'execute',
  'files',
  'processes',
  'webhooks',
];

/** Who is calling: resolved from the API key on every request. */
export interface Principal {
  keyId: string;
  accountId: string;
  plan: PlanName;
  limits: PlanLimits;
  scopes: readonly Scope[];
}
