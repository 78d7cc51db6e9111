/** The page: top bar, nodes and the live decision feed side by side, rules / what-if / pending below. */
import { DecisionFeed } from './feed.js';
import { Header } from './header.js';
import type { DashboardState } from './live.js';
import { NodesPanel } from './nodes-panel.js';
import { PendingPanel } from './pending-panel.js';
import { RulesPanel } from './rules-panel.js';
import { SignIn } from './sign-in.js';
import type { Store } from './store.js';
import { useStore } from './store.js';
import { TrendChart } from './trend.js';
import { Panel } from './ui.js';
import { WhatIfPanel } from './whatif.js';

export function App(props: { store: Store<DashboardState> }) {
  const state = useStore(props.store, (s) => s);
  return (
    <>
      <Header state={state} />
      <SignIn />
      <main class="layout">
        <div class="col-main">
          <NodesPanel state={state} />
          <Panel id="trend" title="Cluster load" subtitle={<span class="dim">since this page opened</span>}>
            <TrendChart trend={state.trend} />
          </Panel>
        </div>
        <div class="col-side">
          <DecisionFeed state={state} />
          <PendingPanel state={state} />
        </div>
        <div class="col-bottom">
          <RulesPanel state={state} />
          <WhatIfPanel state={state} />
        </div>
      </main>
    </>
  );
}
