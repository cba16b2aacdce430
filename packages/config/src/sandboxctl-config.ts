import { z } from 'zod';
import { optionalString, parseEnv, type Env } from './env-schema';

const sandboxctlSchema = z
  .object({
    SANDBOX_ADMIN_URL: z.string().default('http://127.0.0.1:8080'),
    ADMIN_TOKEN: optionalString(),
  })
  .transform((env) => ({
    adminUrl: env.SANDBOX_ADMIN_URL.replace(/\/+$/, ''),
    adminToken: env.ADMIN_TOKEN,
  }));

export type SandboxctlConfig = Readonly<z.output<typeof sandboxctlSchema>>;

/** sandboxctl's defaults from the environment; command-line flags override them. */
export function loadSandboxctlConfig(env: Env = process.env): SandboxctlConfig {
  return parseEnv(sandboxctlSchema, env);
}
