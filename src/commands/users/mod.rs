//! `kcli users`: SCRAM credentials as Kafka stores them in `/config/users`, listed (with each
//! user's quotas beside them: DescribeClientQuotas' semantics), set and removed through
//! ZooKeeper or through a broker. `store` reaches either with the same two
//! operations (Kafka's describe and alter semantics, `server/user_scram_admin.rs`); `password`
//! reads the secret; `render` prints tables and JSON. The password, salts and keys are never
//! printed. Exit 0 when done, 2 on an error (one line naming the user, flag or broker).

mod password;
mod render;
mod store;

pub(crate) use render::error_name;

use std::io::{BufRead, Write};
use std::num::NonZeroU32;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};

use super::Outcome;
use crate::cli::{
    ScramMechanismArg, UsersAddArgs, UsersCommand, UsersCommonArgs, UsersListArgs, UsersRemoveArgs,
};
use crate::protocol::errors::ErrorCode;
use crate::security::scram_credential::{ScramMechanism, secure_random_string};
use crate::server::user_scram_admin::{
    AlterResult, Deletion, DescribeOutcome, DescribeResult, Upsertion,
};

use store::Store;

/// Runs one `kcli users` command; `stdin` is read only with `--password-stdin`.
pub(crate) fn run(
    command: &UsersCommand,
    stdin: &mut dyn BufRead,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let text = runtime.block_on(async {
        match command {
            UsersCommand::List(args) => list(args).await,
            UsersCommand::Add(args) => add(args, stdin).await,
            UsersCommand::Remove(args) => remove(args).await,
        }
    })?;
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("writing to stdout")?;
    Ok(Outcome::Success)
}

pub(crate) fn mechanism(arg: ScramMechanismArg) -> ScramMechanism {
    match arg {
        ScramMechanismArg::ScramSha256 => ScramMechanism::ScramSha256,
        ScramMechanismArg::ScramSha512 => ScramMechanism::ScramSha512,
    }
}

async fn open(common: &UsersCommonArgs) -> anyhow::Result<Store> {
    let timeout = Duration::from_millis(common.connection_timeout_ms);
    match (&common.source.zookeeper, &common.source.bootstrap_server) {
        (Some(zk), _) => Store::zookeeper(zk, timeout).await,
        (None, Some(bootstrap)) => Ok(Store::broker(bootstrap, timeout)),
        (None, None) => bail!("give --zookeeper or --bootstrap-server"),
    }
}

/// The error a user's result carries, as `user <name>: CODE: message`.
fn user_error(user: &str, error: ErrorCode, message: Option<&str>) -> anyhow::Error {
    let message = message.filter(|m| !m.is_empty()).unwrap_or(error.message());
    anyhow!("user {user:?}: {}: {message}", render::error_name(error))
}

async fn list(args: &UsersListArgs) -> anyhow::Result<String> {
    let store = open(&args.common).await?;
    let named = (!args.users.is_empty()).then_some(args.users.as_slice());
    let outcome = store.describe(named).await;
    let quotas = match &outcome {
        Ok(DescribeOutcome::Results(_)) => store.user_quotas().await,
        _ => Ok(Default::default()),
    };
    store.close().await;
    let results = match outcome? {
        DescribeOutcome::Results(results) => results,
        DescribeOutcome::Failed { error, message } => {
            bail!(
                "{} refused the listing: {}: {message}",
                store.name(),
                render::error_name(error)
            )
        }
    };
    if let Some(r) = results.iter().find(|r| r.error != ErrorCode::None) {
        return Err(user_error(&r.user, r.error, r.message.as_deref()));
    }
    Ok(render::list(&results, &quotas?, args.common.format))
}

fn check_alter(results: &[AlterResult], user: &str) -> anyhow::Result<()> {
    match results.iter().find(|r| r.user == user) {
        Some(r) if r.error == ErrorCode::None => Ok(()),
        Some(r) => Err(user_error(&r.user, r.error, r.message.as_deref())),
        None => bail!("the answer names no result for user {user:?}"),
    }
}

async fn add(args: &UsersAddArgs, stdin: &mut dyn BufRead) -> anyhow::Result<String> {
    let mechanism = mechanism(args.mechanism);
    let (min, max) = (mechanism.min_iterations(), mechanism.max_iterations());
    let iterations = NonZeroU32::new(args.iterations)
        .filter(|i| (min..=max).contains(&i.get()))
        .ok_or_else(|| {
            anyhow!(
                "--iterations {} is outside {min}..={max}, Kafka's bounds for {mechanism}",
                args.iterations
            )
        })?;
    if args.user.is_empty() {
        bail!("the user name is empty");
    }
    let password = match &args.password_file {
        Some(path) => password::from_file(path)?,
        None => password::from_reader(stdin).context("reading the password from standard input")?,
    };
    // What Kafka's admin client sends: a salt of its random base-36 string, and Hi() of the
    // password with it. A credential set through ZooKeeper is made the same way.
    let salt = secure_random_string()?.into_bytes();
    let salted_password = mechanism.salted_password(password.expose(), &salt, iterations);
    let upsertion = Upsertion {
        name: args.user.clone(),
        mechanism: mechanism.mechanism_type(),
        iterations: i32::try_from(iterations.get()).unwrap_or(i32::MAX),
        salt,
        salted_password,
    };
    let store = open(&args.common).await?;
    let results = store.alter(std::slice::from_ref(&upsertion), &[]).await;
    store.close().await;
    check_alter(&results?, &args.user)?;
    Ok(render::added(
        &args.user,
        mechanism,
        iterations.get(),
        args.common.format,
    ))
}

async fn remove(args: &UsersRemoveArgs) -> anyhow::Result<String> {
    if args.user.is_empty() {
        bail!("the user name is empty");
    }
    let store = open(&args.common).await?;
    let outcome = remove_with(&store, args).await;
    store.close().await;
    let removed = outcome?;
    Ok(render::removed(&args.user, &removed, args.common.format))
}

async fn remove_with(store: &Store, args: &UsersRemoveArgs) -> anyhow::Result<Vec<ScramMechanism>> {
    let mechanisms = match args.mechanism {
        Some(m) => vec![mechanism(m)],
        None => {
            let described = store
                .describe(Some(std::slice::from_ref(&args.user)))
                .await?;
            let result: Option<DescribeResult> = match described {
                DescribeOutcome::Results(results) => {
                    results.into_iter().find(|r| r.user == args.user)
                }
                DescribeOutcome::Failed { error, message } => {
                    bail!(
                        "{} refused to describe user {:?}: {}: {message}",
                        store.name(),
                        args.user,
                        render::error_name(error)
                    )
                }
            };
            match result {
                Some(r) if r.error == ErrorCode::None => {
                    r.credentials.into_iter().map(|(m, _)| m).collect()
                }
                Some(r) if r.error == ErrorCode::ResourceNotFound => {
                    bail!("user {:?} has no SCRAM credential", args.user)
                }
                Some(r) => return Err(user_error(&r.user, r.error, r.message.as_deref())),
                None => bail!("the answer names no result for user {:?}", args.user),
            }
        }
    };
    let deletions: Vec<Deletion> = mechanisms
        .iter()
        .map(|m| Deletion {
            name: args.user.clone(),
            mechanism: m.mechanism_type(),
        })
        .collect();
    let results = store.alter(&[], &deletions).await?;
    match results.iter().find(|r| r.user == args.user) {
        Some(r) if r.error == ErrorCode::ResourceNotFound && args.mechanism.is_some() => {
            bail!("user {:?} has no {} credential", args.user, mechanisms[0])
        }
        _ => check_alter(&results, &args.user)?,
    }
    Ok(mechanisms)
}
