import { describeDashboard } from './dashboard.suite.js';

describeDashboard('node');
