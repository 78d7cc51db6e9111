// NodePorts: host port conflicts by (hostIP, protocol, port), with 0.0.0.0 as a wildcard; sidecars'
// ports count, regular init containers' ports do not.
import { container, existing, node, pod } from '../build.js';
import type { Scenario } from '../types.js';

export const nodePortsScenarios: Scenario[] = [
  {
    name: 'the same hostPort cannot be used twice on a node',
    area: 'NodePorts',
    description:
      'n1 already serves TCP 8080: the first incoming 8080 pod goes to n2, the second finds no free port.',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [node('n1'), node('n2')],
    existingPods: [existing('ingress-0', 'n1', { hostPorts: [[8080]] })],
    pods: [
      pod('ingress-1', { hostPorts: [[8080]] }),
      pod('ingress-2', { hostPorts: [[8080]] }),
      pod('other-port', { hostPorts: [[8081]] }),
    ],
    expect: { unschedulable: ['ingress-2'], placements: { 'ingress-1': ['n2'], 'other-port': ['n1', 'n2'] } },
  },
  {
    name: 'different protocols on one port do not conflict',
    area: 'NodePorts',
    description:
      'TCP 53 is taken on the only node: UDP 53 still fits, TCP 53 (the default protocol) does not.',
    orderIndependent: true,
    nodes: [node('n1')],
    existingPods: [existing('dns-tcp', 'n1', { hostPorts: [[53, 'TCP']] })],
    pods: [pod('dns-udp', { hostPorts: [[53, 'UDP']] }), pod('dns-tcp-2', { hostPorts: [[53]] })],
    expect: { unschedulable: ['dns-tcp-2'], placements: { 'dns-udp': ['n1'] } },
  },
  {
    name: 'hostIP: specific addresses coexist, 0.0.0.0 conflicts with all',
    area: 'NodePorts',
    description:
      'n1 has 127.0.0.1:9000 in use: 127.0.0.2:9000 fits, 127.0.0.1:9000 and the wildcard do not. n2 has the ' +
      'wildcard 0.0.0.0:9100 in use, which blocks 127.0.0.5:9100.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    existingPods: [
      existing('local-1', 'n1', { hostPorts: [[9000, 'TCP', '127.0.0.1']] }),
      existing('wild-1', 'n2', { hostPorts: [[9100]] }),
    ],
    pods: [
      pod('local-2', {
        hostPorts: [[9000, 'TCP', '127.0.0.2']],
        spec: { nodeSelector: { 'kubernetes.io/hostname': 'n1' } },
      }),
      pod('local-same', {
        hostPorts: [[9000, 'TCP', '127.0.0.1']],
        spec: { nodeSelector: { 'kubernetes.io/hostname': 'n1' } },
      }),
      pod('wildcard', { hostPorts: [[9000]], spec: { nodeSelector: { 'kubernetes.io/hostname': 'n1' } } }),
      pod('specific-vs-wild', {
        hostPorts: [[9100, 'TCP', '127.0.0.5']],
        spec: { nodeSelector: { 'kubernetes.io/hostname': 'n2' } },
      }),
    ],
    expect: {
      unschedulable: ['local-same', 'wildcard', 'specific-vs-wild'],
      placements: { 'local-2': ['n1'] },
    },
  },
  {
    name: "sidecars' host ports count, regular init containers' do not",
    area: 'NodePorts',
    description:
      "Restartable init containers (sidecars) run for the pod's lifetime, so their hostPorts are occupied; " +
      'a regular init container has exited and its hostPort is free.',
    orderIndependent: true,
    nodes: [node('n1')],
    existingPods: [
      existing('with-sidecar', 'n1', {
        spec: { initContainers: [container('proxy', { restartPolicy: 'Always', hostPorts: [[7000]] })] },
      }),
      existing('with-init', 'n1', {
        spec: { initContainers: [container('setup', { hostPorts: [[7100]] })] },
      }),
    ],
    pods: [
      pod('wants-7000', { hostPorts: [[7000]] }),
      pod('wants-7100', { hostPorts: [[7100]] }),
      pod('sidecar-7200', {
        spec: { initContainers: [container('proxy', { restartPolicy: 'Always', hostPorts: [[7200]] })] },
      }),
    ],
    expect: { unschedulable: ['wants-7000'], placements: { 'wants-7100': ['n1'], 'sidecar-7200': ['n1'] } },
  },
  {
    name: 'hostNetwork pods occupy their container ports',
    area: 'NodePorts',
    description:
      'For hostNetwork pods the API defaults hostPort to containerPort: an existing hostNetwork pod on 9500 ' +
      'blocks an incoming hostPort 9500; port 9501 is free.',
    orderIndependent: true,
    nodes: [node('n1')],
    existingPods: [
      existing('agent', 'n1', {
        spec: {
          hostNetwork: true,
          containers: [{ ...container('agent'), ports: [{ containerPort: 9500 }] }],
        },
      }),
    ],
    pods: [pod('wants-9500', { hostPorts: [[9500]] }), pod('wants-9501', { hostPorts: [[9501]] })],
    expect: { unschedulable: ['wants-9500'], placements: { 'wants-9501': ['n1'] } },
  },
];
