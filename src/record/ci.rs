//! What the CI system says about the job `perfdash record` runs in: the
//! commit, branch, job URL and pull-request number, read from the
//! variables each provider sets (names from the providers' own reference
//! pages, listed in docs/ci.md).

/// The facts one CI provider gives about the current job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CiFacts {
    /// `github-actions`, `gitlab-ci`, `jenkins`, `buildkite`, `circleci`,
    /// `azure-pipelines`.
    pub provider: &'static str,
    pub commit: Option<String>,
    /// The branch under test: for a pull request, its source branch.
    pub branch: Option<String>,
    pub job_url: Option<String>,
    /// The pull (or merge) request number, when the job runs for one.
    pub pull_request: Option<String>,
}

/// Reads the CI facts through `var` (the process environment in
/// production, a map in tests). `None` when no known provider is detected.
/// Empty variables count as unset (CI systems export empty ones).
pub fn detect(var: &dyn Fn(&str) -> Option<String>) -> Option<CiFacts> {
    let get = |name: &str| {
        var(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if get("GITHUB_ACTIONS").is_some() {
        return Some(github_actions(&get));
    }
    if get("GITLAB_CI").is_some() {
        return Some(CiFacts {
            provider: "gitlab-ci",
            commit: get("CI_COMMIT_SHA"),
            branch: get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME")
                .or_else(|| get("CI_COMMIT_BRANCH"))
                .or_else(|| get("CI_COMMIT_REF_NAME")),
            job_url: get("CI_JOB_URL"),
            pull_request: get("CI_MERGE_REQUEST_IID"),
        });
    }
    if get("BUILDKITE").is_some() {
        let job_url = get("BUILDKITE_BUILD_URL").map(|build| match get("BUILDKITE_JOB_ID") {
            Some(job) => format!("{build}#{job}"),
            None => build,
        });
        return Some(CiFacts {
            provider: "buildkite",
            commit: get("BUILDKITE_COMMIT"),
            branch: get("BUILDKITE_BRANCH"),
            job_url,
            // "false" when the build is not for a pull request.
            pull_request: get("BUILDKITE_PULL_REQUEST").filter(|p| p != "false"),
        });
    }
    if get("CIRCLECI").is_some() {
        // CIRCLE_PR_NUMBER is set for pull requests from forks only;
        // CIRCLE_PULL_REQUEST is the pull request's URL.
        let pull_request = get("CIRCLE_PR_NUMBER").or_else(|| {
            get("CIRCLE_PULL_REQUEST")
                .and_then(|url| url.rsplit('/').next().map(str::to_string))
                .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        });
        return Some(CiFacts {
            provider: "circleci",
            commit: get("CIRCLE_SHA1"),
            branch: get("CIRCLE_BRANCH"),
            job_url: get("CIRCLE_BUILD_URL"),
            pull_request,
        });
    }
    if get("TF_BUILD").is_some() {
        // GitHub pull requests have a number apart from Azure's id.
        let pull_request = get("SYSTEM_PULLREQUEST_PULLREQUESTNUMBER")
            .or_else(|| get("SYSTEM_PULLREQUEST_PULLREQUESTID"));
        let branch = get("SYSTEM_PULLREQUEST_SOURCEBRANCH")
            .or_else(|| get("BUILD_SOURCEBRANCH"))
            .map(|b| b.strip_prefix("refs/heads/").unwrap_or(&b).to_string());
        let job_url = match (
            get("SYSTEM_COLLECTIONURI"),
            get("SYSTEM_TEAMPROJECT"),
            get("BUILD_BUILDID"),
        ) {
            (Some(collection), Some(project), Some(id)) => Some(format!(
                "{}/{project}/_build/results?buildId={id}",
                collection.trim_end_matches('/')
            )),
            _ => None,
        };
        return Some(CiFacts {
            provider: "azure-pipelines",
            commit: get("BUILD_SOURCEVERSION"),
            branch,
            job_url,
            pull_request,
        });
    }
    // Jenkins last: its variables (GIT_COMMIT, BUILD_URL) are generic
    // names other tools set too; JENKINS_URL says it is Jenkins.
    if get("JENKINS_URL").is_some() {
        // Multibranch pipelines set BRANCH_NAME (and CHANGE_ID, CHANGE_BRANCH
        // for pull requests); the git plugin sets GIT_BRANCH as origin/<b>.
        let branch = get("CHANGE_BRANCH")
            .or_else(|| get("BRANCH_NAME"))
            .or_else(|| {
                get("GIT_BRANCH").map(|b| b.strip_prefix("origin/").unwrap_or(&b).to_string())
            });
        return Some(CiFacts {
            provider: "jenkins",
            commit: get("GIT_COMMIT"),
            branch,
            job_url: get("BUILD_URL"),
            pull_request: get("CHANGE_ID"),
        });
    }
    None
}

/// GitHub Actions' facts.
fn github_actions(get: &dyn Fn(&str) -> Option<String>) -> CiFacts {
    // On `pull_request` events GITHUB_REF is refs/pull/<n>/merge and
    // GITHUB_HEAD_REF the source branch; on pushes GITHUB_REF_NAME is
    // the branch.
    let pull_request = get("GITHUB_REF").and_then(|r| {
        r.strip_prefix("refs/pull/")
            .and_then(|rest| rest.split('/').next())
            .map(str::to_string)
    });
    let job_url = match (
        get("GITHUB_SERVER_URL"),
        get("GITHUB_REPOSITORY"),
        get("GITHUB_RUN_ID"),
    ) {
        (Some(server), Some(repo), Some(run)) => Some(format!(
            "{}/{repo}/actions/runs/{run}",
            server.trim_end_matches('/')
        )),
        _ => None,
    };
    CiFacts {
        provider: "github-actions",
        commit: get("GITHUB_SHA"),
        branch: get("GITHUB_HEAD_REF").or_else(|| get("GITHUB_REF_NAME")),
        job_url,
        pull_request,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn facts(vars: &[(&str, &str)]) -> Option<CiFacts> {
        let map: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        detect(&|name| map.get(name).cloned())
    }

    fn some(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    #[test]
    fn no_ci_no_facts() {
        assert_eq!(facts(&[("HOME", "/root"), ("CI", "true")]), None);
    }

    #[test]
    fn github_actions_push_and_pull_request() {
        let base = [
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_SHA", "4f2a9c1e"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "acme/shop"),
            ("GITHUB_RUN_ID", "987654"),
        ];
        let mut push = base.to_vec();
        push.extend([
            ("GITHUB_REF", "refs/heads/main"),
            ("GITHUB_REF_NAME", "main"),
        ]);
        assert_eq!(
            facts(&push),
            Some(CiFacts {
                provider: "github-actions",
                commit: some("4f2a9c1e"),
                branch: some("main"),
                job_url: some("https://github.com/acme/shop/actions/runs/987654"),
                pull_request: None,
            })
        );
        let mut pr = base.to_vec();
        pr.extend([
            ("GITHUB_REF", "refs/pull/42/merge"),
            ("GITHUB_REF_NAME", "42/merge"),
            ("GITHUB_HEAD_REF", "faster-orders"),
        ]);
        let got = facts(&pr).unwrap();
        assert_eq!(got.branch, some("faster-orders"));
        assert_eq!(got.pull_request, some("42"));
    }

    #[test]
    fn gitlab_ci_merge_request() {
        let got = facts(&[
            ("GITLAB_CI", "true"),
            ("CI_COMMIT_SHA", "abc123"),
            ("CI_COMMIT_REF_NAME", "faster-orders"),
            ("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "faster-orders"),
            ("CI_MERGE_REQUEST_IID", "17"),
            ("CI_JOB_URL", "https://gitlab.com/acme/shop/-/jobs/555"),
        ])
        .unwrap();
        assert_eq!(got.provider, "gitlab-ci");
        assert_eq!(got.commit, some("abc123"));
        assert_eq!(got.branch, some("faster-orders"));
        assert_eq!(got.pull_request, some("17"));
        assert_eq!(got.job_url, some("https://gitlab.com/acme/shop/-/jobs/555"));
        let push = facts(&[
            ("GITLAB_CI", "true"),
            ("CI_COMMIT_BRANCH", "main"),
            ("CI_COMMIT_REF_NAME", "main"),
        ])
        .unwrap();
        assert_eq!((push.branch, push.pull_request), (some("main"), None));
    }

    #[test]
    fn jenkins_multibranch_and_git_plugin() {
        let pr = facts(&[
            ("JENKINS_URL", "https://ci.acme/"),
            ("GIT_COMMIT", "deadbeef"),
            ("BRANCH_NAME", "PR-9"),
            ("CHANGE_ID", "9"),
            ("CHANGE_BRANCH", "faster-orders"),
            ("BUILD_URL", "https://ci.acme/job/shop/job/PR-9/3/"),
        ])
        .unwrap();
        assert_eq!(pr.provider, "jenkins");
        assert_eq!(pr.branch, some("faster-orders"));
        assert_eq!(pr.pull_request, some("9"));
        assert_eq!(pr.job_url, some("https://ci.acme/job/shop/job/PR-9/3/"));
        let plain = facts(&[
            ("JENKINS_URL", "https://ci.acme/"),
            ("GIT_BRANCH", "origin/main"),
        ])
        .unwrap();
        assert_eq!(plain.branch, some("main"));
    }

    #[test]
    fn buildkite_false_means_no_pull_request() {
        let got = facts(&[
            ("BUILDKITE", "true"),
            ("BUILDKITE_COMMIT", "cafe"),
            ("BUILDKITE_BRANCH", "main"),
            (
                "BUILDKITE_BUILD_URL",
                "https://buildkite.com/acme/shop/builds/12",
            ),
            ("BUILDKITE_JOB_ID", "0190-ab"),
            ("BUILDKITE_PULL_REQUEST", "false"),
        ])
        .unwrap();
        assert_eq!(got.pull_request, None);
        assert_eq!(
            got.job_url,
            some("https://buildkite.com/acme/shop/builds/12#0190-ab")
        );
        let pr = facts(&[("BUILDKITE", "true"), ("BUILDKITE_PULL_REQUEST", "31")]).unwrap();
        assert_eq!(pr.pull_request, some("31"));
    }

    #[test]
    fn circleci_pull_request_from_url_or_fork_number() {
        let got = facts(&[
            ("CIRCLECI", "true"),
            ("CIRCLE_SHA1", "f00d"),
            ("CIRCLE_BRANCH", "faster-orders"),
            ("CIRCLE_BUILD_URL", "https://circleci.com/gh/acme/shop/77"),
            (
                "CIRCLE_PULL_REQUEST",
                "https://github.com/acme/shop/pull/12",
            ),
        ])
        .unwrap();
        assert_eq!(got.provider, "circleci");
        assert_eq!(got.pull_request, some("12"));
        assert_eq!(got.job_url, some("https://circleci.com/gh/acme/shop/77"));
        let fork = facts(&[("CIRCLECI", "true"), ("CIRCLE_PR_NUMBER", "13")]).unwrap();
        assert_eq!(fork.pull_request, some("13"));
    }

    #[test]
    fn azure_pipelines_branch_without_refs_heads() {
        let got = facts(&[
            ("TF_BUILD", "True"),
            ("BUILD_SOURCEVERSION", "beef"),
            ("BUILD_SOURCEBRANCH", "refs/heads/main"),
            ("SYSTEM_COLLECTIONURI", "https://dev.azure.com/acme/"),
            ("SYSTEM_TEAMPROJECT", "shop"),
            ("BUILD_BUILDID", "4321"),
        ])
        .unwrap();
        assert_eq!(got.provider, "azure-pipelines");
        assert_eq!(got.branch, some("main"));
        assert_eq!(
            got.job_url,
            some("https://dev.azure.com/acme/shop/_build/results?buildId=4321")
        );
        let pr = facts(&[
            ("TF_BUILD", "True"),
            ("BUILD_SOURCEBRANCH", "refs/pull/8/merge"),
            (
                "SYSTEM_PULLREQUEST_SOURCEBRANCH",
                "refs/heads/faster-orders",
            ),
            ("SYSTEM_PULLREQUEST_PULLREQUESTID", "800"),
            ("SYSTEM_PULLREQUEST_PULLREQUESTNUMBER", "8"),
        ])
        .unwrap();
        assert_eq!(pr.branch, some("faster-orders"));
        assert_eq!(pr.pull_request, some("8"));
    }

    #[test]
    fn empty_variables_count_as_unset() {
        let got = facts(&[("GITHUB_ACTIONS", "true"), ("GITHUB_SHA", "  ")]).unwrap();
        assert_eq!(got.commit, None);
        assert_eq!(facts(&[("GITHUB_ACTIONS", "")]), None);
    }
}
