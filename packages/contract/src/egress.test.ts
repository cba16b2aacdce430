import {
  domainMatches,
  egressDecision,
  ipv4,
  isEgressProblem,
  parseCidr,
  parseDomain,
  parseEgressPolicy,
  formatCidr,
  nameDecision,
  type EgressPolicy,
} from './egress';

const ip = (text: string) => ipv4(text) ?? -1;
const cidr = (text: string) => {
  const parsed = parseCidr(text);
  return parsed === undefined ? undefined : formatCidr(parsed);
};

describe.each([
  {
    rule: 'IPv4 CIDRs and single addresses, normalised to their network',
    parse: cidr,
    reads: [
      ['203.0.113.7/24', '203.0.113.0/24'],
      ['203.0.113.7', '203.0.113.7/32'],
      ['0.0.0.0/0', '0.0.0.0/0'],
    ],
    refuses: ['203.0.113.7/33', '256.0.0.1', '1.2.3', '01.2.3.4', '1.2.3.4/', '1.2.3.4/8/8', '::1'],
  },
  {
    rule: 'domains and subdomain wildcards, lower-cased',
    parse: parseDomain,
    reads: [
      ['Example.COM', 'example.com'],
      ['*.example.com', '*.example.com'],
      ['example.com.', 'example.com'],
    ],
    refuses: [
      'localhost',
      '*.com.',
      'exa mple.com',
      '-a.com',
      'a..com',
      '*',
      '1.2.3.4',
      'a.*.com',
      `${'a'.repeat(64)}.com`,
    ],
  },
])('egress rules: $rule', ({ parse, reads, refuses }) => {
  it.each(reads)('reads %j as %j', (text, normal) => {
    expect(parse(text)).toBe(normal);
  });

  it.each(refuses)('refuses %j', (text) => {
    expect(parse(text)).toBeUndefined();
  });
});

describe('egress rules', () => {
  it('matches a wildcard to subdomains only', () => {
    expect(domainMatches('*.example.com', 'api.example.com')).toBe(true);
    expect(domainMatches('*.example.com', 'a.b.example.com')).toBe(true);
    expect(domainMatches('*.example.com', 'example.com')).toBe(false);
    expect(domainMatches('*.example.com', 'badexample.com')).toBe(false);
    expect(domainMatches('example.com', 'EXAMPLE.com.')).toBe(true);
    expect(domainMatches('example.com', 'api.example.com')).toBe(false);
  });
});

describe('egress decisions', () => {
  it('normalises a policy, the fallback filling a missing default', () => {
    expect(
      parseEgressPolicy({ allow: ['203.0.113.9/24', '203.0.113.0/24', 'API.example.com'] }, 'deny'),
    ).toEqual({ default: 'deny', allow: ['203.0.113.0/24', 'api.example.com'], deny: [] });
    const problem = parseEgressPolicy({ deny: ['fine.com', 'not a rule'] }, 'allow');
    expect(isEgressProblem(problem) && problem).toMatchObject({
      field: 'egress.deny[1]',
      value: 'not a rule',
    });
    const many = parseEgressPolicy(
      { allow: Array.from({ length: 65 }, (_, i) => `10.0.0.${i}`) },
      'allow',
    );
    expect(isEgressProblem(many) && many.field).toBe('egress.allow');
  });

  it('decides: deny beats allow beats the default; a nameless connection meets domain denials', () => {
    const policy: EgressPolicy = {
      default: 'deny',
      allow: ['203.0.113.0/24', '*.example.com'],
      deny: ['203.0.113.66/32', 'bad.example.com'],
    };
    expect(egressDecision(policy, ip('203.0.113.5'), undefined)).toBe(false); // deny names a domain
    expect(egressDecision(policy, ip('198.51.100.1'), 'api.example.com')).toBe(true);
    expect(egressDecision(policy, ip('198.51.100.1'), 'bad.example.com')).toBe(false);
    expect(egressDecision(policy, ip('203.0.113.66'), 'api.example.com')).toBe(false);
    expect(egressDecision(policy, ip('198.51.100.1'), 'other.org')).toBe(false);
    const open: EgressPolicy = { default: 'allow', allow: [], deny: ['203.0.113.0/24'] };
    expect(egressDecision(open, ip('198.51.100.1'), undefined)).toBe(true);
    expect(egressDecision(open, ip('203.0.113.1'), 'anything.org')).toBe(false);
    const cidrsOnly: EgressPolicy = { default: 'deny', allow: ['203.0.113.0/24'], deny: [] };
    expect(egressDecision(cidrsOnly, ip('203.0.113.1'), undefined)).toBe(true);
  });

  it('decides names by the domain rules alone: deny beats allow beats the default', () => {
    const allowList: EgressPolicy = {
      default: 'deny',
      allow: ['203.0.113.0/24', '*.example.com', 'api.other.org'],
      deny: ['bad.example.com'],
    };
    expect(nameDecision(allowList, 'cdn.example.com')).toBe(true);
    expect(nameDecision(allowList, 'API.Other.org.')).toBe(true);
    expect(nameDecision(allowList, 'bad.example.com')).toBe(false);
    expect(nameDecision(allowList, 'example.com')).toBe(false); // *.x is x's subdomains
    expect(nameDecision(allowList, 'c2VjcmV0.attacker.example')).toBe(false);
    const denyList: EgressPolicy = { default: 'allow', allow: [], deny: ['*.attacker.example'] };
    expect(nameDecision(denyList, 'c2VjcmV0.attacker.example')).toBe(false);
    expect(nameDecision(denyList, 'registry.npmjs.org')).toBe(true);
  });
});
