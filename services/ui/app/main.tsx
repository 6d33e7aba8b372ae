import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { setUnauthorizedHandler } from './api';
import { href, navigate, useRoute } from './route';
import { getKey } from './session';
import { CallsView } from './views/calls';
import { Projects } from './views/projects';
import { SignIn } from './views/signin';

/** Which view a route shows; every route but sign-in needs a key. */
function App() {
  const route = useRoute();
  const [notice, setNotice] = useState<string | undefined>();
  useEffect(() => {
    setUnauthorizedHandler((reason) => {
      setNotice(`Signed out: ${reason}`);
      navigate(href(['signin']));
    });
  }, []);
  const [head, entity, project, view, ...rest] = route.path;
  if (head === 'signin' || !getKey()) return <SignIn notice={notice} />;
  if (head === 'p' && entity && project) {
    const projectId = `${entity}/${project}`;
    switch (view ?? 'calls') {
      case 'calls':
        return <CallsView projectId={projectId} route={route} />;
      default:
        return <NotFound what={`view '${[view, ...rest].join('/')}'`} />;
    }
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

const root = document.getElementById('app')!;
root.textContent = ''; // the boot message
render(<App />, root);
