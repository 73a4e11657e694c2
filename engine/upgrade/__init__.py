"""`framework project upgrade` (docs/reference-project.md#project-upgrade): template versions, the three-way merge of
user-edited generated files, migration playbooks. Modules: `upgrade` (check and apply), `merge` (git merge-file),
`pin` (framework.yaml's framework_version), `playbooks` (upgrade list / apply, .framework/migrations.json)."""
