import { describe, expect, it } from 'vitest';
import { nodePorts, portsConflict } from './node-ports.js';
import { cycleOf, specNode, specPod, verdictOn } from './plugin.testing.js';

type Port = { hostPort: number; hostIP?: string; protocol?: string; containerPort?: number };

const withPorts = (name: string, ports: Port[], o: { nodeName?: string; initSidecar?: Port[] } = {}) =>
  specPod(name, {
    ...(o.nodeName ? { nodeName: o.nodeName } : {}),
    containers: [{ name: 'c', ports: ports.map((p) => ({ containerPort: p.hostPort, ...p })) }],
    ...(o.initSidecar
      ? { initContainers: [{ name: 'side', restartPolicy: 'Always', ports: o.initSidecar }] }
      : {}),
  });

describe('NodePorts', () => {
  it.each<{ name: string; used: Port[]; wanted: Port[]; conflict: boolean }>([
    { name: 'no ports in use', used: [], wanted: [{ hostPort: 80 }], conflict: false },
    {
      name: 'same port, same protocol (TCP default)',
      used: [{ hostPort: 80 }],
      wanted: [{ hostPort: 80, protocol: 'TCP' }],
      conflict: true,
    },
    { name: 'other port', used: [{ hostPort: 80 }], wanted: [{ hostPort: 8080 }], conflict: false },
    {
      name: 'same port, different protocol',
      used: [{ hostPort: 53, protocol: 'UDP' }],
      wanted: [{ hostPort: 53, protocol: 'TCP' }],
      conflict: false,
    },
    {
      name: 'UDP against UDP',
      used: [{ hostPort: 53, protocol: 'UDP' }],
      wanted: [{ hostPort: 53, protocol: 'UDP' }],
      conflict: true,
    },
    {
      name: 'SCTP is its own protocol',
      used: [{ hostPort: 9, protocol: 'SCTP' }],
      wanted: [{ hostPort: 9 }],
      conflict: false,
    },
    {
      name: 'wildcard in use against a specific IP',
      used: [{ hostPort: 80 }],
      wanted: [{ hostPort: 80, hostIP: '10.0.0.1' }],
      conflict: true,
    },
    {
      name: 'specific IP in use against the wildcard wanted',
      used: [{ hostPort: 80, hostIP: '10.0.0.1' }],
      wanted: [{ hostPort: 80 }],
      conflict: true,
    },
    {
      name: '0.0.0.0 is the wildcard too',
      used: [{ hostPort: 80, hostIP: '0.0.0.0' }],
      wanted: [{ hostPort: 80, hostIP: '10.0.0.2' }],
      conflict: true,
    },
    {
      name: 'same specific IP',
      used: [{ hostPort: 80, hostIP: '10.0.0.1' }],
      wanted: [{ hostPort: 80, hostIP: '10.0.0.1' }],
      conflict: true,
    },
    {
      name: 'different specific IPs',
      used: [{ hostPort: 80, hostIP: '10.0.0.1' }],
      wanted: [{ hostPort: 80, hostIP: '10.0.0.2' }],
      conflict: false,
    },
    {
      name: 'one of several wanted ports in use',
      used: [{ hostPort: 443 }],
      wanted: [{ hostPort: 80 }, { hostPort: 443 }],
      conflict: true,
    },
  ])('$name', ({ used, wanted, conflict }) => {
    const existing = withPorts('existing', used, { nodeName: 'n' });
    const v = verdictOn(nodePorts(), withPorts('p', wanted), specNode('n'), { pods: [existing] });
    expect(v.feasible).toBe(!conflict);
    if (conflict) {
      expect(v.reasons).toEqual([
        expect.objectContaining({
          plugin: 'NodePorts',
          code: 'PortsInUse',
          reason: "node(s) didn't have free ports for the requested pod ports",
        }),
      ]);
      expect(v.reasons[0]?.unresolvable).toBeUndefined();
    }
  });

  it('names the conflicting port in the detail', () => {
    const existing = withPorts('existing', [{ hostPort: 8443, protocol: 'TCP' }], { nodeName: 'n' });
    const v = verdictOn(nodePorts(), withPorts('p', [{ hostPort: 8443 }]), specNode('n'), {
      pods: [existing],
    });
    expect(v.reasons[0]?.detail).toBe('TCP 0.0.0.0:8443 is in use');
  });

  it('counts the ports of restartable init containers (sidecars), on both sides', () => {
    const existing = withPorts('existing', [], {
      nodeName: 'n',
      initSidecar: [{ hostPort: 9100, containerPort: 9100 } as Port],
    });
    expect(
      verdictOn(nodePorts(), withPorts('p', [{ hostPort: 9100 }]), specNode('n'), { pods: [existing] })
        .feasible,
    ).toBe(false);
    const wantsSidecar = withPorts('p', [], {
      initSidecar: [{ hostPort: 9100, containerPort: 9100 } as Port],
    });
    const plain = withPorts('existing', [{ hostPort: 9100 }], { nodeName: 'n' });
    expect(verdictOn(nodePorts(), wantsSidecar, specNode('n'), { pods: [plain] }).feasible).toBe(false);
  });

  it('ignores containerPorts without a hostPort, and frees a port when its pod finishes', () => {
    const noHost = specPod('existing', {
      nodeName: 'n',
      containers: [{ name: 'c', ports: [{ containerPort: 80 }] }],
    });
    expect(
      verdictOn(nodePorts(), withPorts('p', [{ hostPort: 80 }]), specNode('n'), { pods: [noHost] }).feasible,
    ).toBe(true);
    const done = specPod(
      'existing',
      { nodeName: 'n', containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 80 }] }] },
      { phase: 'Failed' },
    );
    expect(
      verdictOn(nodePorts(), withPorts('p', [{ hostPort: 80 }]), specNode('n'), { pods: [done] }).feasible,
    ).toBe(true);
  });

  it('is skipped for pods without host ports (PreFilter)', () => {
    const existing = withPorts('existing', [{ hostPort: 80 }], { nodeName: 'n' });
    const { state, verdicts } = cycleOf(nodePorts(), specPod('p'), {
      nodes: [specNode('n')],
      pods: [existing],
    });
    expect(state.skipFilter.has('NodePorts')).toBe(true);
    expect(verdicts[0]?.feasible).toBe(true);
  });

  it('portsConflict is symmetric', () => {
    const a = { hostIP: '', protocol: 'TCP', port: 80 };
    const b = { hostIP: '10.1.1.1', protocol: 'TCP', port: 80 };
    expect(portsConflict(a, b)).toBe(true);
    expect(portsConflict(b, a)).toBe(true);
    expect(portsConflict(b, { ...b, hostIP: '10.1.1.2' })).toBe(false);
  });
});
