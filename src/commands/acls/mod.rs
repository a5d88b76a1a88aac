//! `kcli acls`: ACLs as Kafka's AclAuthorizer stores them, listed, added and removed through
//! ZooKeeper or through a broker. `store` reaches either with the same three operations
//! (Kafka's `acls`, `createAcls` and `deleteAcls`); `render` prints tables and JSON. The
//! bindings are built from the flags as Kafka's `AclCommand` builds them: each principal with
//! each operation and host, on each resource. Exit 0 when done, 2 on an error (one line naming
//! the flag, ACL or broker).

mod render;
mod store;

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};

use super::Outcome;
use super::users::error_name;
use crate::cli::{
    AclsChangeArgs, AclsCommand, AclsCommonArgs, AclsListArgs, AclsPatternArg, AclsResourceArgs,
};
use crate::security::acl::{
    AccessControlEntry, AccessControlEntryFilter, AclBinding, AclBindingFilter, AclOperation,
    AclPermissionType, CLUSTER_NAME, PatternType, ResourcePattern, ResourcePatternFilter,
    ResourceType, WILDCARD_HOST,
};

use store::Store;

/// Runs one `kcli acls` command.
pub(crate) fn run(command: &AclsCommand, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let text = runtime.block_on(async {
        match command {
            AclsCommand::List(args) => list(args).await,
            AclsCommand::Add(args) => add(args).await,
            AclsCommand::Remove(args) => remove(args).await,
        }
    })?;
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("writing to stdout")?;
    Ok(Outcome::Success)
}

async fn open(common: &AclsCommonArgs) -> anyhow::Result<Store> {
    let timeout = Duration::from_millis(common.connection_timeout_ms);
    match (&common.source.zookeeper, &common.source.bootstrap_server) {
        (Some(zk), _) => Store::zookeeper(zk, timeout).await,
        (None, Some(bootstrap)) => Ok(Store::broker(bootstrap, timeout)),
        (None, None) => bail!("give --zookeeper or --bootstrap-server"),
    }
}

fn pattern_type(arg: AclsPatternArg) -> PatternType {
    match arg {
        AclsPatternArg::Any => PatternType::Any,
        AclsPatternArg::Match => PatternType::Match,
        AclsPatternArg::Literal => PatternType::Literal,
        AclsPatternArg::Prefixed => PatternType::Prefixed,
    }
}

/// The resources named, as (type, name); the cluster is `kafka-cluster`.
fn resources(args: &AclsResourceArgs) -> anyhow::Result<Vec<(ResourceType, String)>> {
    let mut out = Vec::new();
    for (flag, resource_type, names) in [
        ("--topic", ResourceType::Topic, &args.topic),
        ("--group", ResourceType::Group, &args.group),
        (
            "--transactional-id",
            ResourceType::TransactionalId,
            &args.transactional_id,
        ),
    ] {
        for name in names {
            if name.is_empty() {
                bail!("{flag} is empty");
            }
            out.push((resource_type, name.clone()));
        }
    }
    if args.cluster {
        out.push((ResourceType::Cluster, CLUSTER_NAME.to_string()));
    }
    Ok(out)
}

fn check_principal(principal: &str) -> anyhow::Result<()> {
    match principal.split_once(':') {
        Some((kind, name)) if !kind.is_empty() && !name.is_empty() => Ok(()),
        _ => bail!("principal {principal:?} is not TYPE:NAME (e.g. User:alice)"),
    }
}

fn operations(names: &[String]) -> anyhow::Result<Vec<AclOperation>> {
    names
        .iter()
        .map(|n| {
            let op = AclOperation::parse(n);
            if matches!(op, AclOperation::Unknown | AclOperation::Any) {
                Err(anyhow!("--operation {n:?} is not an ACL operation"))
            } else {
                Ok(op)
            }
        })
        .collect()
}

/// (principal, permission) pairs of the change flags.
fn principals(args: &AclsChangeArgs) -> anyhow::Result<Vec<(String, AclPermissionType)>> {
    let mut out = Vec::new();
    for (list, permission) in [
        (&args.allow_principal, AclPermissionType::Allow),
        (&args.deny_principal, AclPermissionType::Deny),
    ] {
        for p in list {
            check_principal(p)?;
            out.push((p.clone(), permission));
        }
    }
    Ok(out)
}

async fn list(args: &AclsListArgs) -> anyhow::Result<String> {
    if let Some(p) = &args.principal {
        check_principal(p)?;
    }
    let pattern_type = pattern_type(args.resource_pattern_type);
    let named = resources(&args.resources)?;
    let entry_filter = AccessControlEntryFilter {
        principal: args.principal.clone(),
        ..AccessControlEntryFilter::any()
    };
    let filters: Vec<AclBindingFilter> = if named.is_empty() {
        vec![AclBindingFilter {
            pattern_filter: ResourcePatternFilter {
                pattern_type,
                ..ResourcePatternFilter::any()
            },
            entry_filter,
        }]
    } else {
        named
            .into_iter()
            .map(|(resource_type, name)| AclBindingFilter {
                pattern_filter: ResourcePatternFilter {
                    resource_type,
                    name: Some(name),
                    pattern_type,
                },
                entry_filter: entry_filter.clone(),
            })
            .collect()
    };
    let store = open(&args.common).await?;
    let mut bindings = Vec::new();
    let mut outcome = Ok(());
    for f in &filters {
        match store.describe(f).await {
            Ok(found) => bindings.extend(found),
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    store.close().await;
    outcome?;
    bindings.sort();
    bindings.dedup();
    Ok(render::bindings(&bindings, args.common.format, "listed"))
}

async fn add(args: &AclsChangeArgs) -> anyhow::Result<String> {
    let pattern_type = pattern_type(args.resource_pattern_type);
    if !pattern_type.is_specific() {
        bail!("--resource-pattern-type must be literal or prefixed to add ACLs");
    }
    let named = resources(&args.resources)?;
    if named.is_empty() {
        bail!("name a resource: --topic, --group, --cluster or --transactional-id");
    }
    let principals = principals(args)?;
    if principals.is_empty() {
        bail!("give --allow-principal or --deny-principal");
    }
    let operations = operations(&args.operation)?;
    if operations.is_empty() {
        bail!("give --operation");
    }
    let hosts = if args.host.is_empty() {
        vec![WILDCARD_HOST.to_string()]
    } else {
        args.host.clone()
    };
    let mut bindings = Vec::new();
    for (resource_type, name) in &named {
        for op in &operations {
            if !resource_type.supported_operations().contains(op) {
                bail!(
                    "operation {op} is not valid on {} resources (valid: {})",
                    resource_type.name(),
                    resource_type
                        .supported_operations()
                        .iter()
                        .map(|o| o.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            for (principal, permission_type) in &principals {
                for host in &hosts {
                    bindings.push(AclBinding {
                        pattern: ResourcePattern::new(*resource_type, name.clone(), pattern_type),
                        entry: AccessControlEntry {
                            principal: principal.clone(),
                            host: host.clone(),
                            operation: *op,
                            permission_type: *permission_type,
                        },
                    });
                }
            }
        }
    }
    let store = open(&args.common).await?;
    let results = store.create(&bindings).await;
    store.close().await;
    for (binding, result) in bindings.iter().zip(results?) {
        if let Err((code, message)) = result {
            bail!(
                "adding {}: {}: {message}",
                render::binding_line(binding),
                error_name(code)
            );
        }
    }
    Ok(render::bindings(&bindings, args.common.format, "added"))
}

async fn remove(args: &AclsChangeArgs) -> anyhow::Result<String> {
    let pattern_type = pattern_type(args.resource_pattern_type);
    let named = resources(&args.resources)?;
    if named.is_empty() {
        bail!("name a resource: --topic, --group, --cluster or --transactional-id");
    }
    let mut principals: Vec<(Option<String>, AclPermissionType)> = principals(args)?
        .into_iter()
        .map(|(p, t)| (Some(p), t))
        .collect();
    if principals.is_empty() {
        principals.push((None, AclPermissionType::Any));
    }
    let mut operations = operations(&args.operation)?;
    if operations.is_empty() {
        operations.push(AclOperation::Any);
    }
    let hosts: Vec<Option<String>> = if args.host.is_empty() {
        vec![None]
    } else {
        args.host.iter().cloned().map(Some).collect()
    };
    let mut filters = Vec::new();
    for (resource_type, name) in &named {
        for op in &operations {
            for (principal, permission_type) in &principals {
                for host in &hosts {
                    filters.push(AclBindingFilter {
                        pattern_filter: ResourcePatternFilter {
                            resource_type: *resource_type,
                            name: Some(name.clone()),
                            pattern_type,
                        },
                        entry_filter: AccessControlEntryFilter {
                            principal: principal.clone(),
                            host: host.clone(),
                            operation: *op,
                            permission_type: *permission_type,
                        },
                    });
                }
            }
        }
    }
    let store = open(&args.common).await?;
    let outcome = store.delete(&filters).await;
    store.close().await;
    let mut removed = outcome?;
    removed.sort();
    removed.dedup();
    Ok(render::bindings(&removed, args.common.format, "removed"))
}
