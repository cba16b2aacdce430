import type { RequestHandler } from 'express';
import { z } from 'zod';
import { AGENT_ADDRESS, NODE_ID } from '@sandbox/config';
import { AppError } from '@sandbox/errors';
import { pathParam, validate } from '../../http/validate';
import type { NodeStore } from '../../nodes/node-store';

const announcement = z.strictObject({
  address: z.string().max(300).regex(AGENT_ADDRESS, 'must be host:port or unix:/path'),
  version: z.string().max(100),
});

/**
 * PUT /internal/v1/nodes/:nodeId — an agent announces itself (with the internal token): it
 * joins the registry, or its address and version are brought up to date. Its state (cordoned,
 * draining) is the operator's and stays.
 */
export function announceNode(fleet: { readonly store: NodeStore }): RequestHandler {
  return async (req, res) => {
    const id = pathParam(req.params, 'nodeId');
    if (!NODE_ID.test(id)) throw new AppError('invalid_request', `"${id}" is not a node id`);
    const body = validate(announcement, req.body ?? {});
    const node = await fleet.store.announce({ id, address: body.address, version: body.version });
    res.json({ nodeId: node.id, state: node.state });
  };
}
