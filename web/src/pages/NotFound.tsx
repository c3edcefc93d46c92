import { Link } from 'react-router';
import { Empty } from '../components/States.tsx';

export function NotFound() {
  return (
    <Empty title="There is no page here">
      <p>
        The link may be out of date. Go to <Link to="/customers">Customers</Link> or <Link to="/alerts">Alerts</Link>.
      </p>
    </Empty>
  );
}
