import { describe, expect, it } from 'vitest';
import { defineResourcesServer, ResourcesServerConfigSchema, BaseVerifyRequestSchema, type VerifyGroupMember } from '@nemo-gym/core/server';
import { groupVerifierOf } from '@nemo-gym/core/rollouts';
import { textResponse } from '@nemo-gym/core/testing';

const verify = { body: BaseVerifyRequestSchema.loose(), handler: (b: object) => ({ ...b, reward: 0 }) };
const member = (id: string) => ({ member_id: id, responses_create_params: { input: 'x' }, response: textResponse(id) });

describe('/verify_group on a resources server', () => {
  it('hands the members to verifyGroup in member id order and answers in the order sent', async () => {
    const seen: string[][] = [];
    const server = defineResourcesServer({
      className: 'G',
      configSchema: ResourcesServerConfigSchema,
      verify,
      verifyGroup: (group) => {
        seen.push(group.members.map((m: VerifyGroupMember) => m.member_id));
        return { members: group.members.map((m: VerifyGroupMember, k: number) => ({ member_id: m.member_id, reward: k })) };
      },
    });
    const app = await server.build({ config: { name: 'g', domain: 'other', verify_group: true } });
    try {
      const res = await app.inject({ method: 'POST', url: '/verify_group', payload: { members: ['3-10', '3-2', '3-0'].map(member) } });
      expect(res.statusCode, res.body).toBe(200);
      expect(seen).toEqual([['3-0', '3-2', '3-10']]);
      expect(res.json().members).toEqual([
        { member_id: '3-10', reward: 2 },
        { member_id: '3-2', reward: 1 },
        { member_id: '3-0', reward: 0 },
      ]);
    } finally {
      await app.close();
    }
  });

  it('an answer that leaves a member without a finite reward is a 500, not a partial result', async () => {
    const server = defineResourcesServer({
      className: 'G',
      configSchema: ResourcesServerConfigSchema,
      verify,
      verifyGroup: (group) => ({ members: group.members.map((m: VerifyGroupMember) => ({ member_id: m.member_id, reward: Number.NaN })) }),
    });
    const app = await server.build({ config: { name: 'g', domain: 'other' } });
    try {
      const res = await app.inject({ method: 'POST', url: '/verify_group', payload: { members: [member('0-0')] } });
      expect(res.statusCode).toBe(500);
    } finally {
      await app.close();
    }
  });

  it('verify_group: true on a server without a group verify stops it at start-up', async () => {
    const server = defineResourcesServer({ className: 'Plain', configSchema: ResourcesServerConfigSchema, verify });
    await expect(server.build({ config: { name: 'p', domain: 'other', verify_group: true } })).rejects.toThrow(/verify_group: true/);
  });
});

describe('groupVerifierOf', () => {
  const config = {
    a: { responses_api_agents: { simple_agent: { resources_server: { type: 'resources_servers', name: 'r' } } } },
    r: { resources_servers: { x: { verify_group: true, group_wait_timeout_s: 5, group_member_failure: 'fail_group' } } },
    b: { responses_api_agents: { simple_agent: { resources_server: { type: 'resources_servers', name: 's' } } } },
    s: { resources_servers: { y: {} } },
  };
  it("reads the agent's resources server's declaration; the command line overrides its settings; a bad value is one clear error", () => {
    expect(groupVerifierOf(config, 'a')).toEqual({ server: 'r', settings: { waitTimeoutMs: 5000, memberFailure: 'fail_group' } });
    expect(groupVerifierOf(config, 'a', { waitTimeoutS: 2, memberFailure: 'score_rest' })).toEqual({ server: 'r', settings: { waitTimeoutMs: 2000, memberFailure: 'score_rest' } });
    expect(groupVerifierOf(config, 'b')).toBeNull();
    expect(() => groupVerifierOf(config, 'a', { memberFailure: 'drop' })).toThrow(/\+group_member_failure must be one of score_rest, fail_group/);
  });
});
