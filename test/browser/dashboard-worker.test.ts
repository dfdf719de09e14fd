import { describeDashboard } from './dashboard.suite.js';

describeDashboard('worker');
