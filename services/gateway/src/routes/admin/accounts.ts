import { Router } from 'express';
import { z } from 'zod';
import { checkCustomLimits, type AccountStore } from '../../accounts/account-store';
import { ALL_SCOPES, type Scope } from '../../auth/principal';
import { isStorableText } from '../../http/storable-json';
import { validate } from '../../http/validate';
import { PLAN_NAMES, type PlanName } from '../../limits/plans';

const planOverrides = z
  .object({
    requestsPerMinute: z.number().int().min(1),
    maxExecutionTimeoutS: z.number().int().min(1).max(300),
    maxMemoryMb: z.number().int().min(128),
    maxFileSizeBytes: z.number().int().min(1),
    maxFilesPerRequest: z.number().int().min(1),
    maxEnvVars: z.number().int().min(0),
    maxConcurrentSessions: z.number().int().min(0),
    maxSessionTtlS: z.number().int().min(1).max(604_800),
    maxOutputLogBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .max(64 * 1024 * 1024),
    egressDefault: z.enum(['allow', 'deny']),
    maxSnapshots: z.number().int().min(0),
    maxSnapshotBytes: z.number().int().min(0),
  })
  .partial()
  .strict();

const text = (max: number) =>
  z.string().max(max).refine(isStorableText, 'must not contain NUL bytes or invalid Unicode');

const createAccountBody = z.object({
  name: text(200).pipe(z.string().min(1)),
  plan: z.enum(PLAN_NAMES as [PlanName, ...PlanName[]]),
  limits: planOverrides.optional(),
});

const updateAccountBody = z.strictObject({
  name: text(200).pipe(z.string().min(1)).optional(),
  plan: z.enum(PLAN_NAMES as [PlanName, ...PlanName[]]).optional(),
  limits: planOverrides.optional().describe('replaces the custom values; {} clears them'),
});

const createKeyBody = z.object({
  name: text(200).default(''),
  scopes: z
    .array(z.enum(ALL_SCOPES as [Scope, ...Scope[]]))
    .min(1)
    .default([...ALL_SCOPES]),
});

/** The operator's admin API: accounts on plans, and their API keys. */
export function adminRouter(accounts: AccountStore): Router {
  const router = Router();

  router.post('/accounts', async (req, res) => {
    const body = validate(createAccountBody, req.body ?? {});
    checkCustomLimits(body.plan, body.limits);
    const account = await accounts.createAccount({
      name: body.name,
      plan: body.plan,
      planOverrides: body.limits ?? {},
    });
    res.status(201).json(account);
  });

  router.get('/accounts', async (_req, res) => {
    res.json({ data: await accounts.listAccounts() });
  });

  router.get('/accounts/:accountId', async (req, res) => {
    res.json(await accounts.getAccount(req.params.accountId));
  });

  router.patch('/accounts/:accountId', async (req, res) => {
    const body = validate(updateAccountBody, req.body ?? {});
    res.json(
      await accounts.updateAccount(req.params.accountId, {
        ...(body.name === undefined ? {} : { name: body.name }),
        ...(body.plan === undefined ? {} : { plan: body.plan }),
        ...(body.limits === undefined ? {} : { planOverrides: body.limits }),
      }),
    );
  });

  router.post('/accounts/:accountId/keys', async (req, res) => {
    const body = validate(createKeyBody, req.body ?? {});
    res.status(201).json(await accounts.createKey(req.params.accountId, body));
  });

  router.get('/accounts/:accountId/keys', async (req, res) => {
    res.json({ data: await accounts.listKeys(req.params.accountId) });
  });

  router.post('/keys/:keyId/revoke', async (req, res) => {
    res.json(await accounts.revokeKey(req.params.keyId));
  });

  return router;
}
