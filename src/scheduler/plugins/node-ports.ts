/**
 * NodePorts (PreFilter + Filter): the pod's host ports must be free on the node. Two ports conflict when
 * protocol and port are equal and the host IPs are equal or either is a wildcard ("" / 0.0.0.0).
 *   fails ⇔ ∃ wanted w, used u: w.protocol = u.protocol ∧ w.port = u.port ∧ (w.ip = u.ip ∨ wildcard(w.ip) ∨ wildcard(u.ip))
 */
import type { HostPort } from '../../cluster/model.js';
import type { FilterPlugin, PreFilterPlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { PLUGIN } from './names.js';

function wildcard(ip: string): boolean {
  return ip === '' || ip === '0.0.0.0';
}

export function portsConflict(a: HostPort, b: HostPort): boolean {
  return (
    a.port === b.port &&
    a.protocol === b.protocol &&
    (a.hostIP === b.hostIP || wildcard(a.hostIP) || wildcard(b.hostIP))
  );
}

export function nodePorts(): PreFilterPlugin & FilterPlugin {
  return {
    name: PLUGIN.NodePorts,
    preFilter: (_state, ctx) => (ctx.pod.hostPorts.length === 0 ? { skip: true } : undefined),
    filter(_state, ctx, n, verdict) {
      const wanted = ctx.pod.hostPorts;
      for (const used of n.usedPorts.values()) {
        for (const u of used) {
          const w = wanted.find((p) => portsConflict(p, u));
          if (!w) continue;
          addReason(verdict, {
            plugin: PLUGIN.NodePorts,
            code: 'PortsInUse',
            reason: "node(s) didn't have free ports for the requested pod ports",
            detail: `${w.protocol} ${w.hostIP || '0.0.0.0'}:${w.port} is in use`,
          });
          return;
        }
      }
    },
  };
}
