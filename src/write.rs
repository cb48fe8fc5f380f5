//! Writing the site.
