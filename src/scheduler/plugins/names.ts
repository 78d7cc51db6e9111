/** Plugin names, as kube-scheduler names them (and nodeload's own beside them). */
export const PLUGIN = {
  SchedulingGates: 'SchedulingGates',
  PrioritySort: 'PrioritySort',
  NodeUnschedulable: 'NodeUnschedulable',
  NodeName: 'NodeName',
  TaintToleration: 'TaintToleration',
  NodeAffinity: 'NodeAffinity',
  NodePorts: 'NodePorts',
  NodeResourcesFit: 'NodeResourcesFit',
  NodeResourcesBalancedAllocation: 'NodeResourcesBalancedAllocation',
  ImageLocality: 'ImageLocality',
  InterPodAffinity: 'InterPodAffinity',
  PodTopologySpread: 'PodTopologySpread',
  DefaultBinder: 'DefaultBinder',
  NodeLoadRules: 'NodeLoadRules',
  BurstGuard: 'BurstGuard',
  LoadAware: 'LoadAware',
} as const;
