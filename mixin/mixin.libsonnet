// The Kafka compaction-health monitor's monitoring mixin: its alert rules and its Grafana dashboard, for
// jsonnet (jsonnet-bundler, `jsonnet -J`). docs/mixin.md says how to use it.
//
// Everything under generated/ is rendered from the project's one rule table and panel table (the same as
// `compaction-monitor rules render` and `grafana render`; alerts/mixin.py) by `python -m cli.docgen --write`:
// edit those, not these files. This file only fills in _config; tests/alerts/test_mixin.py evaluates it.
local rules = import 'generated/rules.json';
local alerts = import 'generated/alerts.json';

{
  // selector: PromQL label matchers every series the rules select also carries, in place of the job match of
  //   CompactionMonitorDown's `up`; default: job="kafka-compaction-monitor".
  // runbookURLBase: where each alert's runbook_url points, then #<alert name in lower case>; point it at
  //   your copy of alerts/RUNBOOK.md (default: alerts/RUNBOOK.md, the path in the repository).
  // every threshold of monitor.yaml's thresholds, camelCased (laggingFor: '30m', bufferUtilizationRatio: 0.85,
  //   ...: generated/config.json lists them with their defaults; docs/configuration.md says what each is).
  _config+:: import 'generated/config.json',

  // Each rule's expr, for and annotations hold %(key)s slots for _config's values (a literal % is written %%).
  local fill(groups, config) = [
    group {
      rules: [
        rule + { expr: rule.expr % config }
        + (if std.objectHas(rule, 'for') then { 'for': rule['for'] % config } else {})
        + (if std.objectHas(rule, 'annotations')
           then { annotations: { [k]: rule.annotations[k] % config for k in std.objectFields(rule.annotations) } }
           else {})
        for rule in group.rules
      ],
    }
    for group in groups
  ],

  // The recording rule the alerts build on (TombstonesPilingUp's tombstones summed over their sections):
  // load it with the alerts.
  prometheusRules+:: {
    groups+: fill(rules.groups, $._config),
  },

  prometheusAlerts+:: {
    groups+: fill(alerts.groups, $._config),
  },

  grafanaDashboards+:: {
    'kafka-compaction.json': import 'generated/dashboards/kafka-compaction.json',
  },
}
