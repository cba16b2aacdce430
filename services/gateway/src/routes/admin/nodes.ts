import { Router } from 'express';
import { z } from 'zod';
import { AGENT_ADDRESS, NODE_ID } from '@sandbox/config';
import { AppError } from '@sandbox/errors';
import { validate } from '../../http/validate';
import type { NodeState } from '../../nodes/node-store';
import type { NodeViews } from '../../nodes/node-views';

const addNodeBody = z.strictObject({
  nodeId: z.string().regex(NODE_ID, 'must be a DNS label (a-z, 0-9, -)'),
  address: z.string().max(300).regex(AGENT_ADDRESS, 'must be host:port or unix:/path'),
});

/** The state each action puts a node in. */
const STATE_OF_ACTION: Record<string, NodeState> = {
  cordon: 'cordoned',
  uncordon: 'active',
  drain: 'draining',
};

/** 409 unless the node's sessions could wake elsewhere (its blob store is shared). */
async function refuseUndrainable(fleet: NodeViews, id: string): Promise<void> {
  const node = await fleet.get(id);
  if (node.drainable) return;
  throw new AppError(
    'conflict',
    node.blobStore === null
      ? `Node "${id}" has not answered a heartbeat yet: its blob store is unknown`
      : `Node "${id}" keeps deep-sleeping workspaces in its own store (${node.blobStore}): its sessions could not wake elsewhere; configure a shared store (BLOB_STORE=s3) to drain it`,
  );
}

const removeQuery = z.object({ lost: z.enum(['true', 'false']).optional() });

const nodeId = (params: Record<string, string | undefined>): string => {
  const id = params.nodeId ?? '';
  if (!NODE_ID.test(id)) throw new AppError('invalid_request', `"${id}" is not a node id`);
  return id;
};

/**
 * The operator's fleet API: nodes listed with their health and load, added, cordoned (no new
 * session), drained (sessions moved to other nodes through deep sleep) and removed. Every
 * change is in the registry: each replica applies it at its next heartbeat, this one at once.
 */
export function nodesRouter(fleet: NodeViews): Router {
  const router = Router();
  const changed = async (id: string) => {
    await fleet.agents.refresh();
    return fleet.get(id);
  };

  router.get('/nodes', async (_req, res) => {
    res.json({ data: await fleet.list() });
  });

  router.post('/nodes', async (req, res) => {
    const body = validate(addNodeBody, req.body ?? {});
    await fleet.store.add({ id: body.nodeId, address: body.address });
    res.status(201).json(await changed(body.nodeId));
  });

  router.get('/nodes/:nodeId', async (req, res) => {
    res.json(await fleet.get(nodeId(req.params)));
  });

  for (const [action, state] of Object.entries(STATE_OF_ACTION)) {
    router.post(`/nodes/:nodeId/${action}`, async (req, res) => {
      const id = nodeId(req.params);
      if (state === 'draining') await refuseUndrainable(fleet, id);
      await fleet.store.setState(id, state);
      res.json(await changed(id));
    });
  }

  // ?lost=true: the node is gone for good. Its sleepers in a shared store wake elsewhere; its
  // other sessions end (session.lost events). Refused while its heartbeat answers.
  router.delete('/nodes/:nodeId', async (req, res) => {
    const id = nodeId(req.params);
    const { lost } = validate(removeQuery, req.query);
    if (lost !== 'true') {
      await fleet.store.remove(id);
      await fleet.agents.refresh();
      res.status(204).end();
      return;
    }
    await fleet.agents.tick();
    const node = await fleet.get(id);
    if (node.health === 'up') {
      throw new AppError(
        'conflict',
        `Node "${id}" answers its heartbeat: it is not lost (drain it to move its sessions)`,
      );
    }
    const lostSessions = await fleet.sessions.forgetLostNode(id);
    await fleet.agents.refresh();
    res.json({ nodeId: id, lostSessions });
  });

  return router;
}
