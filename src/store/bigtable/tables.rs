//! Table admin: the admin API's requests (with credentials for Cloud Bigtable), the tables
//! listed, family names and GC rules, and the descriptor cache writes are checked against.

use super::*;

/// Checks a family name against Bigtable's rules: `[_a-zA-Z0-9][-_.a-zA-Z0-9]*`, 1 to 64.
pub(super) fn validate_family(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['-', '.'])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(Error::BadArgument(format!(
            "column family {name:?}: Bigtable family names are 1 to 64 of [-_.a-zA-Z0-9], not starting with '-' or '.'"
        )))
    }
}

/// The versions a GC rule keeps, if it bounds them.
pub(super) fn max_versions(rule: &admin::GcRule) -> Option<u32> {
    use admin::gc_rule::Rule;
    match rule.rule.as_ref()? {
        Rule::MaxNumVersions(n) => Some((*n).max(1) as u32),
        Rule::MaxAge(_) => None,
        // Kept only while every rule keeps it: the smallest bound.
        Rule::Union(u) => u.rules.iter().filter_map(max_versions).min(),
        // Kept while any rule keeps it: bounded only if every rule is.
        Rule::Intersection(i) => i
            .rules
            .iter()
            .map(max_versions)
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .max(),
    }
}

/// A family's GC rule as HBase's own Bigtable client maps a family: its versions, and with a
/// TTL, cells collected once either bound is passed (a union).
pub(super) fn gc_rule(versions: u32, storage: &crate::store::Storage) -> admin::GcRule {
    use admin::gc_rule::{Rule, Union};
    let versions = admin::GcRule {
        rule: Some(Rule::MaxNumVersions(versions.min(i32::MAX as u32) as i32)),
    };
    if storage.forever() {
        return versions;
    }
    let age = admin::GcRule {
        rule: Some(Rule::MaxAge(prost_types::Duration {
            seconds: i64::from(storage.ttl),
            nanos: 0,
        })),
    };
    admin::GcRule {
        rule: Some(Rule::Union(Union {
            rules: vec![versions, age],
        })),
    }
}

/// The age, in whole seconds, past which a GC rule collects every cell, if it bounds it.
pub(super) fn max_age(rule: &admin::GcRule) -> Option<u32> {
    use admin::gc_rule::Rule;
    let secs = |d: &prost_types::Duration| d.seconds.clamp(1, i64::from(crate::store::storage::FOREVER)) as u32;
    match rule.rule.as_ref()? {
        Rule::MaxNumVersions(_) => None,
        Rule::MaxAge(d) => Some(secs(d)),
        Rule::Union(u) => u.rules.iter().filter_map(max_age).min(),
        Rule::Intersection(i) => i
            .rules
            .iter()
            .map(max_age)
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .max(),
    }
}

impl Bigtable {
    /// An admin request, with a bearer token outside the emulator.
    pub(super) async fn admin_request<T>(&self, msg: T) -> Result<tonic::Request<T>> {
        let mut req = tonic::Request::new(msg);
        if let Some(auth) = &self.auth {
            let token = auth
                .token(&[ADMIN_SCOPE])
                .await
                .map_err(|e| Error::Io(format!("cannot get a Google access token: {e}")))?;
            let value = format!("Bearer {}", token.as_str())
                .parse()
                .map_err(|_| Error::Io("the Google access token is not a valid header".into()))?;
            req.metadata_mut().insert("authorization", value);
        }
        Ok(req)
    }

    /// Runs an admin call, retrying transient failures.
    pub(super) fn admin_call<T, R, F>(&self, msg: T, table: &str, call: F) -> Result<R>
    where
        T: Clone,
        F: AsyncFn(AdminClient, tonic::Request<T>) -> std::result::Result<tonic::Response<R>, tonic::Status>,
    {
        self.rt.block_on(async {
            let mut delay = Duration::from_millis(20);
            for attempt in 1..=ATTEMPTS {
                let req = self.admin_request(msg.clone()).await?;
                match call(self.admin.clone(), req).await {
                    Ok(r) => return Ok(r.into_inner()),
                    Err(s) => {
                        let e = status_error(s.code(), s.message(), table);
                        if !e.is_transient() || attempt == ATTEMPTS {
                            return Err(e);
                        }
                    }
                }
                tokio::time::sleep(delay).await;
                delay *= 4;
            }
            unreachable!("the last attempt returns")
        })
    }

    /// Every table id of the instance.
    pub(super) fn table_ids(&self) -> Result<Vec<String>> {
        let mut ids = Vec::new();
        let mut page_token = String::new();
        loop {
            let req = admin::ListTablesRequest {
                parent: self.parent(),
                view: admin::table::View::NameOnly as i32,
                page_size: 0,
                page_token: page_token.clone(),
            };
            let resp = self.admin_call(req, "", async |mut c, r| c.list_tables(r).await)?;
            let prefix = format!("{}/tables/", self.parent());
            ids.extend(
                resp.tables
                    .iter()
                    .filter_map(|t| t.name.strip_prefix(&prefix).map(str::to_string)),
            );
            if resp.next_page_token.is_empty() {
                return Ok(ids);
            }
            page_token = resp.next_page_token;
        }
    }

    pub(super) fn descriptor(&self, table: &str) -> Result<TableDescriptor> {
        let name = canonical_table_name(table)?;
        if let Some(d) = self.tables.read().expect("lock").get(&name) {
            return Ok(d.clone());
        }
        let d = self.describe_table(&name)?;
        self.tables.write().expect("lock").insert(name, d.clone());
        Ok(d)
    }

    pub(super) fn forget(&self, name: &str) {
        self.tables.write().expect("lock").remove(name);
    }
}
