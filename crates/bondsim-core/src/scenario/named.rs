//! Enums a scenario names by one word (`sender.kernel = "linux-3.x"`, `links.N.placement =
//! "shaper"`): declared once with [`named_enum!`], read with [`by_name`].

/// Declares an enum read from its name only (kernel eras, link placements): a plain string
/// (serde's enum forms would say "expected unit" of a table), its first variant the default, a
/// wrong name answered with the names allowed ([`by_name`]). The caller has serde's derives and
/// `by_name` in scope.
macro_rules! named_enum {
    ($(#[$meta:meta])* pub enum $name:ident {
        $(#[$first_meta:meta])* $first:ident = $first_text:literal,
        $($(#[$vmeta:meta])* $variant:ident = $text:literal,)*
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
        #[serde(try_from = "String")]
        pub enum $name {
            $(#[$first_meta])*
            #[default]
            #[serde(rename = $first_text)]
            $first,
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)*
        }

        impl $name {
            /// Every value, the default first.
            pub const ALL: &'static [$name] = &[$name::$first, $($name::$variant),*];

            /// The value's name in a scenario.
            pub fn name(self) -> &'static str {
                match self {
                    $name::$first => $first_text,
                    $($name::$variant => $text,)*
                }
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;

            fn try_from(name: String) -> std::result::Result<Self, String> {
                by_name(&name, &$name::ALL.iter().map(|&v| (v.name(), v)).collect::<Vec<_>>())
            }
        }
    };
}

pub(super) use named_enum;

/// The value named `name` in `names`, else an error listing the names (``must be one of `a`, `b`,
/// got "x"``, with the one most likely meant) for an enum read from its name only.
pub(super) fn by_name<T: Copy>(name: &str, names: &[(&str, T)]) -> std::result::Result<T, String> {
    if let Some(&(_, value)) = names.iter().find(|(n, _)| *n == name) {
        return Ok(value);
    }
    let names: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
    Err(bondsim_bond::error::one_of(&names, name))
}
