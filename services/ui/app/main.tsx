import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { setUnauthorizedHandler } from './api';
import { href, navigate, parseHash, useRoute } from './route';
import { hashForSdkPath } from './sdk-links';
import { getKey } from './session';
import { AlertsView } from './views/alerts';
import { AnalyticsView } from './views/analytics';
import { CallsView } from './views/calls';
import { DatasetDiffView } from './views/dataset-diff';
import { DeliveryView } from './views/delivery';
import { EvaluationCompareView } from './views/evaluation-compare';
import { EvaluationsView } from './views/evaluations';
import { LeaderboardView } from './views/leaderboards';
import { ObjectView } from './views/object';
import { ObjectsView } from './views/objects';
import { PlaygroundView } from './views/playground';
import { QueueView } from './views/queue';
import { QueuesView } from './views/queues';
import { MonitorsView } from './views/monitors';
import { Projects } from './views/projects';
import { SettingsView } from './views/settings';
import { SignIn } from './views/signin';
import { TableView } from './views/table';
import { ThreadView } from './views/thread';
import { ThreadsView } from './views/threads';
import { CallRedirect, TraceView } from './views/trace';

/** Which view a route shows; every route but sign-in needs a key. */
function App() {
  const route = useRoute();
  const [notice, setNotice] = useState<string | undefined>();
  useEffect(() => {
    setUnauthorizedHandler((reason) => {
      setNotice(`Signed out: ${reason}`);
      // Back where the user was once signed in again.
      if (parseHash(location.hash).path[0] !== 'signin') navigate(href(['signin'], { next: location.hash }), { replace: true });
    });
  }, []);
  const [head, entity, project, view, ...rest] = route.path;
  // Without a key any URL shows sign-in and stays as it is, so signing in lands on it.
  if (head === 'signin' || !getKey()) return <SignIn notice={notice} next={head === 'signin' ? route.params.get('next') : location.hash} />;
  if (head === 'p' && entity && project) {
    const projectId = `${entity}/${project}`;
    switch (view ?? 'calls') {
      case 'calls':
        return <CallsView projectId={projectId} route={route} />;
      case 'trace':
        if (rest[0]) return <TraceView key={rest[0]} projectId={projectId} traceId={rest[0]} route={route} />;
        break;
      case 'call':
        if (rest[0]) return <CallRedirect projectId={projectId} callId={rest[0]} />;
        break;
      case 'threads':
        return rest[0] ? <ThreadView projectId={projectId} threadId={rest[0]} /> : <ThreadsView projectId={projectId} route={route} />;
      case 'analytics':
        return <AnalyticsView projectId={projectId} route={route} />;
      case 'evaluations':
        return rest[0] === 'compare' ? (
          <EvaluationCompareView projectId={projectId} route={route} />
        ) : (
          <EvaluationsView projectId={projectId} route={route} />
        );
      case 'leaderboards':
        if (rest[0]) return <LeaderboardView key={rest[0]} projectId={projectId} name={rest[0]} route={route} />;
        break;
      case 'queues':
        return rest[0] ? (
          <QueueView key={rest[0]} projectId={projectId} queueId={rest[0]} route={route} />
        ) : (
          <QueuesView projectId={projectId} />
        );
      case 'monitors':
        return <MonitorsView projectId={projectId} />;
      case 'playground':
        return <PlaygroundView key={rest[0] ?? ''} projectId={projectId} callId={rest[0]} />;
      case 'objects':
        if (rest[0] && rest[1] === 'diff') return <DatasetDiffView projectId={projectId} objectId={rest[0]} route={route} />;
        return rest[0] ? <ObjectView projectId={projectId} objectId={rest[0]} route={route} /> : <ObjectsView projectId={projectId} />;
      case 'table':
        if (rest[0]) return <TableView projectId={projectId} digest={rest[0]} route={route} />;
        break;
      case 'delivery':
        return <DeliveryView projectId={projectId} />;
      case 'alerts':
        return <AlertsView projectId={projectId} route={route} />;
      case 'settings':
        return <SettingsView projectId={projectId} />;
    }
    return <NotFound what={`view '${[view, ...rest].join('/')}'`} />;
  }
  if (head === undefined) return <Projects />;
  return <NotFound what={`page '${route.path.join('/')}'`} />;
}

function NotFound({ what }: { what: string }) {
  return (
    <div class="state empty">
      <h3>No such {what}</h3>
      <a href={href([])}>Back to the projects</a>
    </div>
  );
}

// A link the Weave SDK printed (`/<entity>/<project>/weave/…`) is served this page: shown as its view.
if (location.pathname !== '/') history.replaceState(null, '', `/${hashForSdkPath(location.pathname, location.search) ?? '#/'}`);

const root = document.getElementById('app')!;
root.textContent = ''; // the boot message
render(<App />, root);
